/// How the store answered a `DoorCommitBatch`.
public enum DoorCommitResult: Hashable, Sendable {
    /// Stored: one sequence per event of the batch, nil where its idempotency key was
    /// already stored (a decision made again after a crash: nothing new).
    case committed(sequences: [Int64?])
    /// Nothing of the batch was stored.
    case failed(DoorStoreFailure)
}

public struct DoorStoreFailure: Hashable, Sendable {
    public var message: String
    /// The outbox is at its cap (not a fault of the disk: the server must take the backlog).
    public var outboxFull: Bool
    /// Disk trouble (full, read-only, corrupt, locked, no store): the driver reports its
    /// changes once, so the core does not log each failed attempt.
    public var isDiskTrouble: Bool

    public init(message: String, outboxFull: Bool, isDiskTrouble: Bool = false) {
        self.message = message
        self.outboxFull = outboxFull
        self.isDiskTrouble = isDiskTrouble
    }
}
