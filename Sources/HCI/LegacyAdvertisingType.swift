/// Advertising_Type of LE Set Advertising Parameters (legacy).
public struct LegacyAdvertisingType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let connectableUndirected = LegacyAdvertisingType(rawValue: 0x00)
    public static let connectableDirectedHighDuty = LegacyAdvertisingType(rawValue: 0x01)
    public static let scannableUndirected = LegacyAdvertisingType(rawValue: 0x02)
    public static let nonConnectableUndirected = LegacyAdvertisingType(rawValue: 0x03)
    public static let connectableDirectedLowDuty = LegacyAdvertisingType(rawValue: 0x04)
}
