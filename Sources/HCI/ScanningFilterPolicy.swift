/// Scanning_Filter_Policy.
public struct ScanningFilterPolicy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let acceptAll = ScanningFilterPolicy(rawValue: 0x00)
    public static let filterAcceptListOnly = ScanningFilterPolicy(rawValue: 0x01)
}
