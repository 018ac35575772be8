/// The inside of `Store.commit`: what is done here is stored atomically.
public struct StoreTransaction {
    private unowned let store: Store
    /// Events appended so far in this transaction.
    private(set) var appended = 0

    init(store: Store) {
        self.store = store
    }

    /// Allocates the next sequence and inserts the event whose body `body` renders with it.
    ///
    /// Sequences are allocated inside the transaction and persisted with it: monotonic,
    /// gap-free over committed events, and never reused after a crash.
    ///
    /// - Returns: the sequence, or `nil` when an event with this idempotency key is already
    ///   stored: then nothing is inserted, so a restart that decides the same event again
    ///   can never create a second row for one key.
    /// The event is pending for every configured sink (one `deliveries` row each).
    ///
    /// - Throws: `StoreError.outboxFull` when undelivered events reached the cap
    ///   (`OutboxCounts.undelivered`).
    public mutating func appendEvent(
        idempotencyKey: String, type: String, personId: String, createdAtMillis: Int64,
        body: (_ sequence: Int64) -> [UInt8]
    ) throws(StoreError) -> Int64? {
        let statements = store.statements
        var exists = false
        try statements.keyExists.query([.text(idempotencyKey)]) { _ in
            exists = true
            return false
        }
        if exists { return nil }

        // The kept counts (`OutboxStateCounts`): O(1) per append at 10 undelivered events
        // as at a million, counted again only after another process wrote.
        let maximum = store.configuration.maximumEvents
        let counts = try store.currentStateCounts(appendedInTransaction: appended)
        let undelivered = counts.undelivered + appended
        if undelivered >= maximum { throw .outboxFull(undelivered: undelivered, maximum: maximum) }

        var next: Int64 = 1
        try statements.nextSequence.query { row in
            next = row.int64(0)
            return false
        }
        guard next >= 1, next < Int64.max - SequenceFloor.range else { throw .corruptRow("next_sequence is \(next)") }
        try store.sequenceFloor.cover(next)
        let rendered = body(next)
        try statements.insertEvent.run([
            .integer(next), .text(idempotencyKey), .text(type), .text(personId), .blob(rendered), .integer(createdAtMillis),
        ])
        try statements.insertDeliveries.run([.integer(next), .text(personId), .integer(createdAtMillis)])
        try statements.setNextSequence.run([.integer(next + 1)])
        appended += 1
        return next
    }

    /// Saves (replaces) the presence record of a person.
    public mutating func savePresence(personId: String, record: [UInt8]) throws(StoreError) {
        try store.statements.savePresence.run([.text(personId), .blob(record)])
    }

    public mutating func deletePresence(personId: String) throws(StoreError) {
        try store.statements.deletePresence.run([.text(personId)])
    }
}
