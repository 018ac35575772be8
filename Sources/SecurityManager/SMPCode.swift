/// The code octet of an SMP command (Core Vol 3 Part H §3.3), with the whole PDU's length
/// (code included) for those that have a fixed one.
public struct SMPCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let pairingRequest = SMPCode(rawValue: 0x01)
    public static let pairingResponse = SMPCode(rawValue: 0x02)
    public static let pairingConfirm = SMPCode(rawValue: 0x03)
    public static let pairingRandom = SMPCode(rawValue: 0x04)
    public static let pairingFailed = SMPCode(rawValue: 0x05)
    public static let encryptionInformation = SMPCode(rawValue: 0x06)
    public static let centralIdentification = SMPCode(rawValue: 0x07)
    public static let identityInformation = SMPCode(rawValue: 0x08)
    public static let identityAddressInformation = SMPCode(rawValue: 0x09)
    public static let signingInformation = SMPCode(rawValue: 0x0A)
    public static let securityRequest = SMPCode(rawValue: 0x0B)
    public static let pairingPublicKey = SMPCode(rawValue: 0x0C)
    public static let pairingDHKeyCheck = SMPCode(rawValue: 0x0D)
    public static let pairingKeypressNotification = SMPCode(rawValue: 0x0E)

    /// The PDU's length, code octet included; nil for codes the specification reserves.
    public var pduLength: Int? {
        switch rawValue {
        case 0x01, 0x02: 7
        case 0x03, 0x04, 0x06, 0x08, 0x0A, 0x0D: 17
        case 0x05, 0x0B, 0x0E: 2
        case 0x07: 11
        case 0x09: 8
        case 0x0C: 65
        default: nil
        }
    }
}
