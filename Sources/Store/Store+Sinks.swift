/// What telling the store its sinks changed.
public struct SinkChanges: Hashable, Sendable {
    /// Sinks configured now that were not: each starts from every event still in the outbox.
    public var added: [String] = []
    /// Sinks no longer configured: their deliveries are kept (they resume where they were if
    /// configured again) but hold neither retention nor the cap.
    public var removed: [String] = []

    public init(added: [String] = [], removed: [String] = []) {
        self.added = added
        self.removed = removed
    }

    public var isEmpty: Bool { added.isEmpty && removed.isEmpty }
}

extension Store {
    /// The sinks the configuration has, in name order, as the store knows them (the
    /// agent tells it at start and at every reload; other processes read it from the file).
    public func configuredSinks() throws(StoreError) -> [String] {
        try currentStateCounts().configured
    }

    /// Tells the store which sinks the configuration has (docs/event-api.md, "Sinks"): at
    /// the agent's start, once the store is open and before any event is delivered, and at
    /// every reload. Nothing changes when the set is the one the file has.
    ///
    /// - A sink added starts from every event still in the outbox, delivered elsewhere or
    ///   not (each is pending for it: receivers dedupe by key); one configured before and
    ///   configured again resumes where it was.
    /// - A sink removed keeps its deliveries but no longer holds retention or the cap.
    /// - No sink at all keeps the server's deliveries (the system of record, SPEC §18):
    ///   events wait for it as version 1 kept them pending, `outbox list` and `outbox
    ///   export` show them so, and retention prunes them after `RetentionPolicy.unsentMillis`
    ///   (`forDoor(hasSinks: false)`).
    ///
    /// A change settles every event again (one pass over the outbox, in the one
    /// transaction with the change): rare, and only at a reload that changes the sinks.
    @discardableResult
    public func configureSinks(_ names: [String], nowMillis: Int64) throws(StoreError) -> SinkChanges {
        let wanted = names.isEmpty ? [Self.serverSink] : Set(names)
        var known: [String: Bool] = [:]
        let all = try connection.prepare("SELECT name, configured FROM sinks")
        try all.query { row in
            known[row.text(0)] = row.int64(1) == 1
            return true
        }
        var changes = SinkChanges()
        changes.added = wanted.filter { known[$0] != true }.sorted()
        changes.removed = known.filter { $0.value && !wanted.contains($0.key) }.map(\.key).sorted()
        guard !changes.isEmpty else { return changes }
        try relaxedTransaction { () throws(StoreError) in
            let configure = try connection.prepare("""
                INSERT INTO sinks (name, configured, changed_ms) VALUES (?1, ?2, ?3)
                ON CONFLICT (name) DO UPDATE SET configured = ?2, changed_ms = ?3
                """)
            let backfill = try connection.prepare("""
                INSERT OR IGNORE INTO deliveries (sink, sequence, person_id, next_attempt_ms, updated_ms)
                SELECT ?1, sequence, person_id, ?2, ?2 FROM events
                """)
            for name in changes.added {
                try configure.run([.text(name), .integer(1), .integer(nowMillis)])
                try backfill.run([.text(name), .integer(nowMillis)])
            }
            for name in changes.removed { try configure.run([.text(name), .integer(0), .integer(nowMillis)]) }
            let settleAll = try connection.prepare(
                "UPDATE events SET (settled_state, settled_ms) = (\(Statements.settledValues))")
            try settleAll.run()
        }
        // Counted again: every count may have moved.
        stateCounts = nil
        return changes
    }
}
