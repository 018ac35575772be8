/// The `type` of an event sent to the server (see docs/event-api.md).
public struct AttendanceEventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let checkin = AttendanceEventType(rawValue: "checkin")
    public static let checkout = AttendanceEventType(rawValue: "checkout")
    /// A tag was locked out after failed proofs (see docs/proof-protocol.md).
    public static let spoofSuspected = AttendanceEventType(rawValue: "spoof_suspected")

    public var description: String { rawValue }
}
