/// Why a handshake over an established connection yielded no valid proof (see docs/proof-protocol.md).
/// Every one of these counts towards the lockout; a tag that never connects does not
/// get here at all.
public enum ProofFailure: Hashable, Sendable, CustomStringConvertible {
    /// The Presence Proof service is not on the tag.
    case serviceMissing
    /// The service lacks the Challenge or Response characteristic.
    case characteristicMissing
    /// The tag answered a request with an ATT Error Response.
    case attError(opcode: UInt8, code: UInt8)
    /// The tag's ATT traffic broke the protocol (wrong opcode, truncated, oversized, endless).
    case protocolViolation(String)
    /// The response was read but is not a valid v1 proof.
    case invalidResponse(ProofVerificationError)
    /// The tag stopped answering after the connection was made.
    case timeout
    /// The response was valid but came later after the challenge than `ProofTimeLimit`
    /// allows (milliseconds taken, the bound): too slow for the tag itself, as a relayed
    /// proof would be (docs/security.md, "Relayed proofs").
    case tooSlow(milliseconds: Int, bound: Int)
    /// The link went away mid-handshake (reason as the controller gave it).
    case disconnected(reason: UInt8)
    /// The controller was reset mid-handshake.
    case controllerReset

    /// Whether this failure is the tag's doing and counts towards the lockout. A controller
    /// reset is ours: the handshake is simply tried again.
    public var countsTowardsLockout: Bool { self != .controllerReset }

    /// A short stable name for logs, statistics and events.
    public var name: String {
        switch self {
        case .serviceMissing: "service_missing"
        case .characteristicMissing: "characteristic_missing"
        case .attError: "att_error"
        case .protocolViolation: "protocol_violation"
        case .invalidResponse(.macMismatch): "wrong_response"
        case .invalidResponse: "malformed_response"
        case .timeout: "timeout"
        case .tooSlow: "too_slow"
        case .disconnected: "disconnected"
        case .controllerReset: "controller_reset"
        }
    }

    public var description: String {
        switch self {
        case .serviceMissing: "presence proof service not found"
        case .characteristicMissing: "challenge or response characteristic not found"
        case .attError(let opcode, let code):
            "ATT error 0x" + String(code, radix: 16) + " to request 0x" + String(opcode, radix: 16)
        case .protocolViolation(let what): "ATT protocol violation: " + what
        case .invalidResponse(let error): error.description
        case .timeout: "tag stopped answering"
        case .tooSlow(let milliseconds, let bound):
            "challenge to response took \(milliseconds) ms, more than the \(bound) ms a tag needs (relayed?)"
        case .disconnected(let reason): "disconnected (reason 0x" + String(reason, radix: 16) + ")"
        case .controllerReset: "controller reset during the handshake"
        }
    }
}

/// How long a genuine tag may take from the challenge written to the response read
/// (docs/proof-protocol.md, "Failures"; docs/security.md, "Relayed proofs"): a valid
/// response that takes longer fails as `too_slow` and counts toward the lockout.
public struct ProofTimeLimit: Hashable, Sendable {
    /// Well above what a tag needs: the write and the read take one or two connection
    /// events each (4 events at the 50 ms longest interval the door asks for: 200 ms),
    /// and a lost packet costs one more event; 600 ms leaves 12 events at that interval.
    public static let defaultBound: Duration = .milliseconds(600)

    public var bound: Duration

    public init(bound: Duration = ProofTimeLimit.defaultBound) {
        self.bound = bound
    }

    /// The verdict on a response that verified, given the time from sending the challenge
    /// to receiving the response: nil within the bound.
    public func judge(challengeToResponse elapsed: Duration) -> ProofFailure? {
        guard elapsed > bound else { return nil }
        return .tooSlow(milliseconds: Self.milliseconds(elapsed), bound: Self.milliseconds(bound))
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(clamping: seconds) &* 1000 &+ Int(attoseconds / 1_000_000_000_000_000)
    }
}
