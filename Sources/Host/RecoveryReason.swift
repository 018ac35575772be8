import HCI

/// Why the host is recovering.
public enum RecoveryReason: Hashable, Sendable, CustomStringConvertible {
    case hardwareError(code: UInt8)
    case commandTimeout(Opcode)
    /// The periodic probe went unanswered while scanning.
    case controllerStalled
    /// The controller stopped granting command credits.
    case creditStarvation
    case commandFailed(Opcode, HCIStatus)
    case malformedAnswer(Opcode)
    case transportClosed(String)

    public var description: String {
        switch self {
        case .hardwareError(let code): "hardware error 0x" + String(code, radix: 16)
        case .commandTimeout(let opcode): "command timeout opcode=0x" + String(opcode.rawValue, radix: 16)
        case .controllerStalled: "controller stalled (probe unanswered)"
        case .creditStarvation: "controller granted no command credits"
        case .commandFailed(let opcode, let status): "command 0x" + String(opcode.rawValue, radix: 16) + " failed: \(status)"
        case .malformedAnswer(let opcode): "malformed answer to 0x" + String(opcode.rawValue, radix: 16)
        case .transportClosed(let reason): "transport closed: " + reason
        }
    }
}
