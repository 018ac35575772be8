/// IO capability (Core Vol 3 Part H §3.5.1, Table 3.4).
public struct IOCapability: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let displayOnly = IOCapability(rawValue: 0x00)
    public static let displayYesNo = IOCapability(rawValue: 0x01)
    public static let keyboardOnly = IOCapability(rawValue: 0x02)
    public static let noInputNoOutput = IOCapability(rawValue: 0x03)
    public static let keyboardDisplay = IOCapability(rawValue: 0x04)

    /// 0x05–0xFF are reserved.
    public var isDefined: Bool { rawValue <= 0x04 }

    /// Numeric Comparison against our DisplayYesNo: a display with yes/no, or a keyboard
    /// with a display (§2.3.5.1, Table 2.8).
    public var canCompareDigits: Bool { self == .displayYesNo || self == .keyboardDisplay }

    /// What the phone said it has, in an installer's words.
    public var words: String {
        switch self {
        case .displayOnly: "a display but no yes/no"
        case .displayYesNo: "a display and yes/no"
        case .keyboardOnly: "a keyboard but no display"
        case .noInputNoOutput: "no display and no input"
        case .keyboardDisplay: "a keyboard and a display"
        default: "a reserved IO capability 0x" + String(rawValue, radix: 16)
        }
    }
}

/// The AuthReq octet (§3.5.1, Figure 3.3). Bits the specification reserves are kept as
/// received: f6 takes the octet exactly as it travelled.
public struct AuthenticationRequirements: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bonding_Flags = 0b01.
    public static let bonding = AuthenticationRequirements(rawValue: 0x01)
    public static let mitm = AuthenticationRequirements(rawValue: 0x04)
    public static let secureConnections = AuthenticationRequirements(rawValue: 0x08)
    public static let keypress = AuthenticationRequirements(rawValue: 0x10)
    public static let ct2 = AuthenticationRequirements(rawValue: 0x20)
}

/// Initiator and Responder Key Distribution (§3.6.1, Figure 3.11).
public struct KeyDistribution: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let encryptionKey = KeyDistribution(rawValue: 0x01)
    public static let identityKey = KeyDistribution(rawValue: 0x02)
    public static let signingKey = KeyDistribution(rawValue: 0x04)
    public static let linkKey = KeyDistribution(rawValue: 0x08)
}

/// The six parameter octets of a Pairing Request or Pairing Response (§3.5.1, §3.5.2).
public struct PairingFeatures: Hashable, Sendable {
    public var ioCapability: IOCapability
    /// OOB data flag: 0x00 not present, 0x01 present, others reserved.
    public var oobDataFlag: UInt8
    public var authenticationRequirements: AuthenticationRequirements
    public var maximumEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: KeyDistribution
    public var responderKeyDistribution: KeyDistribution

    public init(ioCapability: IOCapability, oobDataFlag: UInt8 = 0, authenticationRequirements: AuthenticationRequirements,
                maximumEncryptionKeySize: UInt8 = 16, initiatorKeyDistribution: KeyDistribution,
                responderKeyDistribution: KeyDistribution) {
        self.ioCapability = ioCapability
        self.oobDataFlag = oobDataFlag
        self.authenticationRequirements = authenticationRequirements
        self.maximumEncryptionKeySize = maximumEncryptionKeySize
        self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }

    /// From the six octets after the code; nil unless exactly six.
    public init?(parameters: ArraySlice<UInt8>) {
        guard parameters.count == 6 else { return nil }
        let octets = Array(parameters)
        self.init(ioCapability: IOCapability(rawValue: octets[0]), oobDataFlag: octets[1],
                  authenticationRequirements: AuthenticationRequirements(rawValue: octets[2]),
                  maximumEncryptionKeySize: octets[3], initiatorKeyDistribution: KeyDistribution(rawValue: octets[4]),
                  responderKeyDistribution: KeyDistribution(rawValue: octets[5]))
    }

    /// The whole PDU with this code (Pairing Request or Pairing Response).
    public func pdu(_ code: SMPCode) -> [UInt8] {
        [code.rawValue, ioCapability.rawValue, oobDataFlag, authenticationRequirements.rawValue, maximumEncryptionKeySize,
         initiatorKeyDistribution.rawValue, responderKeyDistribution.rawValue]
    }

    /// IOcap as f6 takes it: AuthReq, OOB data flag, IO capability from the most
    /// significant octet (§2.2.8).
    public var ioCap: UInt32 {
        UInt32(authenticationRequirements.rawValue) << 16 | UInt32(oobDataFlag) << 8 | UInt32(ioCapability.rawValue)
    }
}
