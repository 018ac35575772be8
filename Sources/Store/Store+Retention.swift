/// Retention (docs/event-api.md, "Retention"): what the outbox keeps once every configured
/// sink has an event (delivered, or refused for good), or — at a door without a sink —
/// never to be sent.
/// Pruned in small batches, oldest first, each in its own relaxed transaction, so that a
/// large backlog costs many short turns of the loop rather than one long one, and each
/// batch looks at no more rows than it may delete, however large the table.
public struct RetentionPolicy: Hashable, Sendable {
    /// Events every configured sink has (sent, or rejected by one) are kept this long after
    /// the last sink took them, for `outbox list`, and at most `maximumDelivered` of them.
    public var deliveredMillis: Int64
    public var maximumDelivered: Int
    /// Dead letters (refused for good by a sink, waiting for `outbox retry-dead`) this long
    /// after the last configured sink settled the event.
    public var deadMillis: Int64
    /// At a door without a sink: events no sink has settled this long after they were
    /// decided; nil keeps them until the sinks take them.
    public var unsentMillis: Int64?
    /// Rows one batch may delete.
    public var batch: Int

    public static let day: Int64 = 86_400_000

    public init(deliveredMillis: Int64 = 7 * day, maximumDelivered: Int = 100_000, deadMillis: Int64 = 30 * day,
                unsentMillis: Int64? = nil, batch: Int = 500) {
        self.deliveredMillis = deliveredMillis
        self.maximumDelivered = maximumDelivered
        self.deadMillis = deadMillis
        self.unsentMillis = unsentMillis
        self.batch = max(1, batch)
    }

    /// A door without a sink keeps what it decided for 90 days (`outbox export` takes it
    /// off the card); with one, undelivered events wait for every sink however long.
    public static func forDoor(hasSinks: Bool) -> RetentionPolicy {
        RetentionPolicy(unsentMillis: hasSinks ? nil : 90 * day)
    }
}

/// Rows one prune removed, by what they were.
public struct PrunedRows: Hashable, Sendable {
    public var sent = 0
    public var rejected = 0
    public var dead = 0
    public var unsent = 0

    public init(sent: Int = 0, rejected: Int = 0, dead: Int = 0, unsent: Int = 0) {
        self.sent = sent
        self.rejected = rejected
        self.dead = dead
        self.unsent = unsent
    }

    public var total: Int { sent + rejected + dead + unsent }

    public static func + (lhs: PrunedRows, rhs: PrunedRows) -> PrunedRows {
        PrunedRows(sent: lhs.sent + rhs.sent, rejected: lhs.rejected + rhs.rejected, dead: lhs.dead + rhs.dead,
                   unsent: lhs.unsent + rhs.unsent)
    }
}

extension Store {
    /// Prunes at most `policy.batch` events: settled ones (every configured sink has them)
    /// past their age or, delivered ones, beyond their count; and at a door without a sink,
    /// unsettled ones past theirs. An event goes with its deliveries, every sink's. `more`
    /// says a full batch went (call again soon). The totals go into `meta` in the same
    /// transaction (`outbox status` shows them).
    ///
    /// Settled events are found through `events_settled` (by settled state, then time): a
    /// batch looks at no more rows than it deletes, however large the table, and an event
    /// held by one sink holds nothing behind it.
    public func pruneBatch(nowMillis: Int64, policy: RetentionPolicy) throws(StoreError) -> (pruned: PrunedRows, more: Bool) {
        let counts = try currentStateCounts()
        var pruned = PrunedRows()
        var deliveries: [String: OutboxStateCounts] = [:]
        try relaxedTransaction { () throws(StoreError) in
            var room = policy.batch
            let deleteDeliveries = try connection.prepare(
                "DELETE FROM deliveries WHERE sink IN (SELECT name FROM sinks) AND sequence = ? RETURNING sink, state")
            let deleteEvent = try connection.prepare("DELETE FROM events WHERE sequence = ?")
            func delete(_ sql: String, _ values: [SQLiteStatement.Value]) throws(StoreError) -> Int {
                var sequences: [Int64] = []
                try connection.prepare(sql).query(values) { row in
                    sequences.append(row.int64(0))
                    return true
                }
                for sequence in sequences {
                    try deleteDeliveries.query([.integer(sequence)]) { row in
                        deliveries[row.text(0), default: OutboxStateCounts()].add(1, to: OutboxState(rawValue: Int32(truncatingIfNeeded: row.int64(1))))
                        return true
                    }
                    try deleteEvent.run([.integer(sequence)])
                }
                room -= sequences.count
                return sequences.count
            }
            func prune(settled state: OutboxState, olderThan ageMillis: Int64?, count limit: Int? = nil) throws(StoreError) -> Int {
                let take = min(room, limit ?? room)
                guard take > 0 else { return 0 }
                let oldest = "SELECT sequence FROM events WHERE settled_state = ?"
                let order = "ORDER BY settled_ms, sequence LIMIT ?"
                guard let ageMillis else {
                    return try delete("\(oldest) \(order)", [.integer(Int64(state.rawValue)), .integer(Int64(take))])
                }
                let (cutoff, overflow) = nowMillis.subtractingReportingOverflow(ageMillis)
                guard !overflow else { return 0 }
                return try delete("\(oldest) AND settled_ms < ? \(order)",
                                  [.integer(Int64(state.rawValue)), .integer(cutoff), .integer(Int64(take))])
            }
            // Beyond the count first (the longest settled), then by age.
            var excess = counts.settled.sent + counts.settled.rejected - policy.maximumDelivered
            if excess > 0 {
                pruned.sent += try prune(settled: .sent, olderThan: nil, count: excess)
                excess -= pruned.sent
                pruned.rejected += try prune(settled: .rejected, olderThan: nil, count: excess)
            }
            pruned.sent += try prune(settled: .sent, olderThan: policy.deliveredMillis)
            pruned.rejected += try prune(settled: .rejected, olderThan: policy.deliveredMillis)
            pruned.dead += try prune(settled: .dead, olderThan: policy.deadMillis)
            if let unsent = policy.unsentMillis, room > 0 {
                // Oldest first by sequence, as many as the batch has room for.
                let (cutoff, overflow) = nowMillis.subtractingReportingOverflow(unsent)
                if !overflow {
                    pruned.unsent += try delete("""
                        SELECT sequence FROM events WHERE sequence IN (
                            SELECT sequence FROM events WHERE settled_state IS NULL ORDER BY sequence LIMIT ?)
                        AND created_ms < ?
                        """, [.integer(Int64(room)), .integer(cutoff)])
                }
            }
            guard pruned.total > 0 else { return }
            var totals = try retentionTotals()
            totals.pruned = totals.pruned + pruned
            for (name, value) in [("pruned_sent", totals.pruned.sent), ("pruned_rejected", totals.pruned.rejected),
                                  ("pruned_dead", totals.pruned.dead), ("pruned_unsent", totals.pruned.unsent)] {
                try statements.setMetaInt.run([.text(name), .integer(Int64(value))])
            }
            try statements.setMetaInt.run([.text("last_prune_ms"), .integer(nowMillis)])
        }
        committedStateChanges { counts in
            counts.events -= pruned.total
            counts.settled.sent -= pruned.sent
            counts.settled.rejected -= pruned.rejected
            counts.settled.dead -= pruned.dead
            for (sink, gone) in deliveries {
                var mine = counts.sink(sink)
                mine.add(OutboxStateCounts(pending: -gone.pending, sent: -gone.sent, rejected: -gone.rejected, dead: -gone.dead))
                counts.sinks[sink] = mine
            }
        }
        return (pruned, pruned.total >= policy.batch)
    }

    /// What retention has removed from this database so far, and when it last did.
    public func retentionTotals() throws(StoreError) -> (pruned: PrunedRows, lastPruneMillis: Int64?) {
        var pruned = PrunedRows()
        var last: Int64?
        try statements.meta.query { row in
            let value = Int(truncatingIfNeeded: row.optionalInt64(1) ?? 0)
            switch row.text(0) {
            case "pruned_sent": pruned.sent = value
            case "pruned_rejected": pruned.rejected = value
            case "pruned_dead": pruned.dead = value
            case "pruned_unsent": pruned.unsent = value
            case "last_prune_ms": last = row.optionalInt64(1)
            default: break
            }
            return true
        }
        return (pruned, last)
    }

    /// Gives the space of pruned rows back to the file system, a few pages at a time
    /// (only a database created with incremental auto-vacuum; an older file keeps its
    /// high-water size), and lets the WAL shrink to its limit.
    public func releaseFreePages(maximumPages: Int = 256) throws(StoreError) {
        try connection.execute("PRAGMA incremental_vacuum(\(max(1, maximumPages)))")
    }
}
