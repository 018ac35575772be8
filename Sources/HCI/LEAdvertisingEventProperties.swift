/// Advertising_Event_Properties of LE Set Extended Advertising Parameters.
public struct LEAdvertisingEventProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let connectable = LEAdvertisingEventProperties(rawValue: 1 << 0)
    public static let scannable = LEAdvertisingEventProperties(rawValue: 1 << 1)
    public static let directed = LEAdvertisingEventProperties(rawValue: 1 << 2)
    public static let highDutyDirected = LEAdvertisingEventProperties(rawValue: 1 << 3)
    public static let legacy = LEAdvertisingEventProperties(rawValue: 1 << 4)
    public static let omitAddress = LEAdvertisingEventProperties(rawValue: 1 << 5)
    public static let includeTxPower = LEAdvertisingEventProperties(rawValue: 1 << 6)
}
