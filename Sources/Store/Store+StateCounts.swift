/// How many events each state holds, kept from this connection's own commits, so that
/// `status` — asked on every status tick and heartbeat — and the outbox cap's check on
/// every append cost the same at 10 rows as at 100,000. Counted (one pass over the table) when first asked and again only after
/// another process changed the file (`PRAGMA data_version`: `outbox retry-dead`, an
/// `outbox` command's writes).
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
}

extension Store {
    /// The counts per state as committed, from the table only when they are not known to
    /// be current. Inside a transaction, `appendedInTransaction` are the events it has
    /// appended so far: a count of the table sees them, the committed counts do not.
    func currentStateCounts(appendedInTransaction: Int = 0) throws(StoreError) -> OutboxStateCounts {
        let version = try dataVersion()
        if let counts = stateCounts, version == stateCountsDataVersion { return counts }
        var counts = OutboxStateCounts()
        try statements.countsByState.query { row in
            counts.add(Int(truncatingIfNeeded: row.int64(1)), to: OutboxState(rawValue: Int32(truncatingIfNeeded: row.int64(0))))
            return true
        }
        counts.pending -= appendedInTransaction
        stateCounts = counts
        stateCountsDataVersion = version
        return counts
    }

    /// Applies what this connection's own transaction changed, once it is committed.
    func committedStateChanges(_ change: (inout OutboxStateCounts) -> Void) {
        guard var counts = stateCounts else { return }
        change(&counts)
        stateCounts = counts
    }

    /// SQLite virtual-machine steps this store's statements have run (see
    /// `SQLiteConnection.virtualMachineSteps`): for tests of the work an operation does.
    public var statementSteps: Int { connection.virtualMachineSteps }
}
