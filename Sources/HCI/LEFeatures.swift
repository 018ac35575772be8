/// The controller's LE features (LE Read Local Supported Features): a 64-bit set.
public struct LEFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let encryption = LEFeatures(rawValue: 1 << 0)
    public static let connectionParametersRequest = LEFeatures(rawValue: 1 << 1)
    public static let extendedRejectIndication = LEFeatures(rawValue: 1 << 2)
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(rawValue: 1 << 3)
    public static let ping = LEFeatures(rawValue: 1 << 4)
    public static let dataPacketLengthExtension = LEFeatures(rawValue: 1 << 5)
    public static let llPrivacy = LEFeatures(rawValue: 1 << 6)
    public static let extendedScannerFilterPolicies = LEFeatures(rawValue: 1 << 7)
    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    public static let codedPHY = LEFeatures(rawValue: 1 << 11)
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
    public static let periodicAdvertising = LEFeatures(rawValue: 1 << 13)
    public static let channelSelectionAlgorithm2 = LEFeatures(rawValue: 1 << 14)
}

/// The LMP feature page 0 (Read Local Supported Features): kept raw, the host only
/// logs it and checks "LE supported".
public struct LMPFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Byte 4 bit 6.
    public static let leSupportedController = LMPFeatures(rawValue: 1 << 38)
    /// Byte 4 bit 5.
    public static let brEdrNotSupported = LMPFeatures(rawValue: 1 << 37)
}
