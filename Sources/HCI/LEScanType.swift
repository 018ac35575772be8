/// Passive scanning only listens; active scanning also sends SCAN_REQ for scan responses.
public struct LEScanType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let passive = LEScanType(rawValue: 0x00)
    public static let active = LEScanType(rawValue: 0x01)
}
