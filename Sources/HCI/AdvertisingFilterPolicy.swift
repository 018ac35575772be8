/// Advertising_Filter_Policy.
public struct AdvertisingFilterPolicy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let acceptAll = AdvertisingFilterPolicy(rawValue: 0x00)
}
