/// Retention (docs/event-api.md, "Retention"): what the outbox keeps once events are
/// delivered, refused for good, or — at a door without a server — never to be sent.
/// Pruned in small batches, oldest first, each in its own relaxed transaction, so that a
/// large backlog costs many short turns of the loop rather than one long one, and each
/// batch looks at no more rows than it may delete, however large the table.
public struct RetentionPolicy: Hashable, Sendable {
    /// Delivered rows (sent, rejected) are kept this long after their last change, for
    /// `outbox list`, and at most `maximumDelivered` of them.
    public var deliveredMillis: Int64
    public var maximumDelivered: Int
    /// Dead letters (refused by the server, waiting for `outbox retry-dead`) this long.
    public var deadMillis: Int64
    /// At a door without a server: undelivered events this long after they were decided;
    /// nil keeps them until a server takes them.
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

    /// A door without a server keeps what it decided for 90 days (`outbox export` takes it
    /// off the card); with one, undelivered events wait for it however long.
    public static func forDoor(hasServer: Bool) -> RetentionPolicy {
        RetentionPolicy(unsentMillis: hasServer ? nil : 90 * day)
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
    /// Prunes at most `policy.batch` rows: delivered ones past their age or beyond their
    /// count, dead letters past theirs, and at a door without a server undelivered ones
    /// past theirs. `more` says a full batch went (call again soon). The totals go into
    /// `meta` in the same transaction (`outbox status` shows them).
    ///
    /// Each kind is looked at from its oldest row by sequence, at most as many rows as the
    /// batch has room for: a row updated later than those behind it (a dead letter sent
    /// again) holds the ones behind it until it is old enough itself.
    public func pruneBatch(nowMillis: Int64, policy: RetentionPolicy) throws(StoreError) -> (pruned: PrunedRows, more: Bool) {
        let counts = try currentStateCounts()
        var pruned = PrunedRows()
        try relaxedTransaction { () throws(StoreError) in
            var room = policy.batch
            func prune(_ state: OutboxState, olderThan ageMillis: Int64?, byCreation: Bool = false,
                       count limit: Int? = nil) throws(StoreError) -> Int {
                let take = min(room, limit ?? room)
                guard take > 0 else { return 0 }
                let oldest = "SELECT sequence FROM events WHERE state = ? ORDER BY sequence LIMIT ?"
                if let ageMillis {
                    let (cutoff, overflow) = nowMillis.subtractingReportingOverflow(ageMillis)
                    guard !overflow else { return 0 }
                    let column = byCreation ? "created_ms" : "updated_ms"
                    let statement = try connection.prepare("DELETE FROM events WHERE sequence IN (\(oldest)) AND \(column) < ?")
                    try statement.run([.integer(Int64(state.rawValue)), .integer(Int64(take)), .integer(cutoff)])
                } else {
                    let statement = try connection.prepare("DELETE FROM events WHERE sequence IN (\(oldest))")
                    try statement.run([.integer(Int64(state.rawValue)), .integer(Int64(take))])
                }
                let deleted = connection.changes
                room -= deleted
                return deleted
            }
            // Beyond the count first (oldest by sequence), then by age.
            var excess = counts.sent + counts.rejected - policy.maximumDelivered
            if excess > 0 {
                pruned.sent += try prune(.sent, olderThan: nil, count: excess)
                excess -= pruned.sent
                pruned.rejected += try prune(.rejected, olderThan: nil, count: excess)
            }
            pruned.sent += try prune(.sent, olderThan: policy.deliveredMillis)
            pruned.rejected += try prune(.rejected, olderThan: policy.deliveredMillis)
            pruned.dead += try prune(.dead, olderThan: policy.deadMillis)
            if let unsent = policy.unsentMillis {
                pruned.unsent += try prune(.pending, olderThan: unsent, byCreation: true)
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
            counts.sent -= pruned.sent
            counts.rejected -= pruned.rejected
            counts.dead -= pruned.dead
            counts.pending -= pruned.unsent
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
