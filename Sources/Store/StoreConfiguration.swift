/// Limits and tuning of the store.
public struct StoreConfiguration: Hashable, Sendable {
    /// Cap on *undelivered* events (pending and dead letters).
    ///
    /// When it is reached, `appendEvent` throws `StoreError.outboxFull`: the newest event
    /// is refused (the agent logs it with its key at error level and the amber LED stays
    /// on) rather than an old one being dropped or the disk filled. Delivered rows
    /// (sent, rejected) never count: they are pruned first. The default, 1,000,000, is
    /// months of a busy door offline and about 1 GB of SD card.
    public var maximumEvents: Int
    /// Delivered rows (sent, rejected) are kept this long for `outbox list`, then pruned.
    public var deliveredRetentionMillis: Int64
    /// How long a statement waits for another process (the `outbox` command) holding
    /// the write lock.
    public var busyTimeoutMillis: Int32

    public init(maximumEvents: Int = 1_000_000, deliveredRetentionMillis: Int64 = 7 * 24 * 3_600_000,
                busyTimeoutMillis: Int32 = 5_000) {
        self.maximumEvents = maximumEvents
        self.deliveredRetentionMillis = deliveredRetentionMillis
        self.busyTimeoutMillis = busyTimeoutMillis
    }
}
