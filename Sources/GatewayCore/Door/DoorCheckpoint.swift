/// A checkpoint of presence (see docs/presence.md, "Restart rules").
public struct DoorCheckpoint: Hashable, Sendable {
    public var records: [DoorRecordWrite]
    /// Durable (wait for the disk) or relaxed (the write reaches the kernel only).
    public var durable: Bool
}
