import EventLoop
import PresenceProof

public struct DoorProofStart: Hashable, Sendable {
    public var tagIndex: Int
    public var handle: UInt16
    public var tagId: String
    public var key: TagKey
    public var cachedHandles: ProofHandles?
    /// When the connection came up (the handshake's start).
    public var at: Instant
}
