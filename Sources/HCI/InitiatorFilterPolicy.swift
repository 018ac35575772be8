/// Initiator_Filter_Policy: connect to the one peer named, or to any device in the
/// Filter Accept List.
public struct InitiatorFilterPolicy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let peerAddress = InitiatorFilterPolicy(rawValue: 0x00)
    public static let filterAcceptList = InitiatorFilterPolicy(rawValue: 0x01)
}
