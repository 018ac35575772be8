/// One LE PHY as reported in extended advertising reports and PHY fields.
public struct LEPhy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// "No packets on the secondary advertising channel" in extended reports.
    public static let none = LEPhy(rawValue: 0x00)
    public static let le1M = LEPhy(rawValue: 0x01)
    public static let le2M = LEPhy(rawValue: 0x02)
    public static let leCoded = LEPhy(rawValue: 0x03)
}

/// A set of PHYs (Scanning_PHYs, Initiating_PHYs): one bit each.
public struct LEPhys: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let le1M = LEPhys(rawValue: 1 << 0)
    public static let le2M = LEPhys(rawValue: 1 << 1)
    public static let leCoded = LEPhys(rawValue: 1 << 2)
}
