/// How many deliveries of one sink each state holds.
struct OutboxStateCounts: Equatable {
    var pending = 0
    var sent = 0
    var rejected = 0
    var dead = 0

    mutating func add(_ delta: Int, to state: OutboxState) {
        switch state {
        case .pending: pending += delta
        case .sent: sent += delta
        case .rejected: rejected += delta
        case .dead: dead += delta
        default: break
        }
    }

    mutating func add(_ other: OutboxStateCounts) {
        pending += other.pending
        sent += other.sent
        rejected += other.rejected
        dead += other.dead
    }

    /// Not delivered: pending, or a dead letter waiting for `outbox retry-dead`.
    var undelivered: Int { pending + dead }
}

/// The outbox's counts, kept from this connection's own commits, so that `status` — asked
/// on every status tick and heartbeat — and the outbox cap's check on every append cost
/// the same at 10 rows as at 100,000. Counted (one pass over the tables) when first asked
/// and again only after another process changed the file (`PRAGMA data_version`: `outbox
/// retry-dead`, an `outbox` command's writes).
struct OutboxCounts: Equatable {
    /// Every sink's deliveries per state, configured or not.
    var sinks: [String: OutboxStateCounts] = [:]
    /// The sinks the configuration has, sorted.
    var configured: [String] = []
    /// Events in the outbox.
    var events = 0
    /// Events every configured sink has, by their settled state (`events.settled_state`).
    var settled = OutboxStateCounts()

    func sink(_ name: String) -> OutboxStateCounts { sinks[name] ?? OutboxStateCounts() }

    /// Undelivered events as the cap counts them (docs/event-api.md, "The cap"): the
    /// largest backlog (pending and dead letters) of any configured sink; without a sink,
    /// every event not settled (they wait for a sink, or for retention).
    var undelivered: Int {
        guard !configured.isEmpty else { return events - settled.sent - settled.rejected - settled.dead }
        return configured.map { sink($0).undelivered }.max() ?? 0
    }

    /// Events appended: pending for every configured sink.
    mutating func appended(_ count: Int) {
        events += count
        for name in configured { sinks[name, default: OutboxStateCounts()].pending += count }
    }
}

extension Store {
    /// The counts as committed, from the tables only when they are not known to be
    /// current. Inside a transaction, `appendedInTransaction` are the events it has
    /// appended so far: a count of the tables sees them, the committed counts do not.
    func currentStateCounts(appendedInTransaction: Int = 0) throws(StoreError) -> OutboxCounts {
        let version = try dataVersion()
        if let counts = stateCounts, version == stateCountsDataVersion { return counts }
        var counts = OutboxCounts()
        try statements.configuredSinks.query { row in
            counts.configured.append(row.text(0))
            return true
        }
        try statements.deliveriesBySinkAndState.query { row in
            let state = OutboxState(rawValue: Int32(truncatingIfNeeded: row.int64(1)))
            counts.sinks[row.text(0), default: OutboxStateCounts()].add(Int(truncatingIfNeeded: row.int64(2)), to: state)
            return true
        }
        try statements.countEvents.query { row in
            counts.events = Int(truncatingIfNeeded: row.int64(0))
            return false
        }
        try statements.settledByState.query { row in
            counts.settled.add(Int(truncatingIfNeeded: row.int64(1)), to: OutboxState(rawValue: Int32(truncatingIfNeeded: row.int64(0))))
            return true
        }
        counts.appended(-appendedInTransaction)
        stateCounts = counts
        stateCountsDataVersion = version
        return counts
    }

    /// Applies what this connection's own transaction changed, once it is committed.
    func committedStateChanges(_ change: (inout OutboxCounts) -> Void) {
        guard var counts = stateCounts else { return }
        change(&counts)
        stateCounts = counts
    }

    /// SQLite virtual-machine steps this store's statements have run (see
    /// `SQLiteConnection.virtualMachineSteps`): for tests of the work an operation does.
    public var statementSteps: Int { connection.virtualMachineSteps }
}
