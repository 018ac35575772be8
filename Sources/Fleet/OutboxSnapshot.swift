/// The outbox in numbers.
public struct OutboxSnapshot: Hashable, Sendable {
    public var pending: Int
    public var dead: Int
    public var rejected: Int
    /// Age of the oldest pending event in seconds, 0 when none is pending.
    public var oldestPendingSeconds: Double

    public init(pending: Int = 0, dead: Int = 0, rejected: Int = 0, oldestPendingSeconds: Double = 0) {
        self.pending = pending
        self.dead = dead
        self.rejected = rejected
        self.oldestPendingSeconds = oldestPendingSeconds
    }
}
