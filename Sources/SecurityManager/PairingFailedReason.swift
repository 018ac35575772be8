/// The reason octet of SMP's Pairing Failed (Core Vol 3 Part H §3.5.5).
public struct PairingFailedReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let passkeyEntryFailed = PairingFailedReason(rawValue: 0x01)
    public static let oobNotAvailable = PairingFailedReason(rawValue: 0x02)
    public static let authenticationRequirements = PairingFailedReason(rawValue: 0x03)
    public static let confirmValueFailed = PairingFailedReason(rawValue: 0x04)
    public static let pairingNotSupported = PairingFailedReason(rawValue: 0x05)
    public static let encryptionKeySize = PairingFailedReason(rawValue: 0x06)
    public static let commandNotSupported = PairingFailedReason(rawValue: 0x07)
    public static let unspecifiedReason = PairingFailedReason(rawValue: 0x08)
    public static let repeatedAttempts = PairingFailedReason(rawValue: 0x09)
    public static let invalidParameters = PairingFailedReason(rawValue: 0x0A)
    public static let dhKeyCheckFailed = PairingFailedReason(rawValue: 0x0B)
    public static let numericComparisonFailed = PairingFailedReason(rawValue: 0x0C)

    public var description: String {
        let words = switch self {
        case .passkeyEntryFailed: "passkey entry failed"
        case .oobNotAvailable: "OOB not available"
        case .authenticationRequirements: "authentication requirements"
        case .confirmValueFailed: "confirm value failed"
        case .pairingNotSupported: "pairing not supported"
        case .encryptionKeySize: "encryption key size"
        case .commandNotSupported: "command not supported"
        case .unspecifiedReason: "unspecified reason"
        case .repeatedAttempts: "repeated attempts"
        case .invalidParameters: "invalid parameters"
        case .dhKeyCheckFailed: "DHKey check failed"
        case .numericComparisonFailed: "numeric comparison failed"
        default: "reason"
        }
        return "\(words) (0x\(rawValue < 0x10 ? "0" : "")\(String(rawValue, radix: 16)))"
    }
}
