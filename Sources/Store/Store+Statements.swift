extension Store {
    /// Every statement the store runs often, prepared once.
    final class Statements {
        /// An event with one sink's delivery of it (`OutboxEntry`): `e` the event, `d` the delivery.
        static let entryColumns = """
            e.sequence, e.idempotency_key, e.type, e.person_id, e.body, d.state, d.attempts, d.next_attempt_ms, \
            d.last_status, d.last_error, e.created_ms, d.updated_ms, d.sink
            """
        static let entryJoin = "events e JOIN deliveries d ON d.sequence = e.sequence"
        /// An event's settled state and time from its configured sinks' deliveries: once
        /// every one is final, the worst final state (sent < rejected < dead, their raw
        /// values' order) and the latest time; NULL while one is pending (or none is
        /// configured). `CROSS JOIN`: the sinks outside, so each is one probe of the
        /// deliveries' primary key (never a scan of them).
        static let settledValues = """
            SELECT CASE WHEN count(*) > 0 AND min(d.state) > 0 THEN max(d.state) END,
                   CASE WHEN count(*) > 0 AND min(d.state) > 0 THEN max(d.updated_ms) END
            FROM sinks s CROSS JOIN deliveries d ON d.sink = s.name AND d.sequence = events.sequence
            WHERE s.configured = 1
            """

        let keyExists: SQLiteStatement
        let nextSequence: SQLiteStatement
        let setNextSequence: SQLiteStatement
        let insertEvent: SQLiteStatement
        let insertDeliveries: SQLiteStatement
        let savePresence: SQLiteStatement
        let deletePresence: SQLiteStatement
        let loadPresence: SQLiteStatement
        let pendingAfter: SQLiteStatement
        let pendingEntriesAfter: SQLiteStatement
        let pendingHead: SQLiteStatement
        let entry: SQLiteStatement
        let markFinal: SQLiteStatement
        let scheduleRetry: SQLiteStatement
        let settledState: SQLiteStatement
        let settle: SQLiteStatement
        let setMetaInt: SQLiteStatement
        let meta: SQLiteStatement
        let sinks: SQLiteStatement
        let configuredSinks: SQLiteStatement
        let sinkSucceeded: SQLiteStatement
        let sinkFailed: SQLiteStatement
        let deliveriesBySinkAndState: SQLiteStatement
        let countEvents: SQLiteStatement
        let settledByState: SQLiteStatement
        let oldestPending: SQLiteStatement
        let oldestEvent: SQLiteStatement
        let dataVersion: SQLiteStatement
        let anyPending: SQLiteStatement

        init(_ connection: SQLiteConnection) throws(StoreError) {
            keyExists = try connection.prepare("SELECT 1 FROM events WHERE idempotency_key = ?")
            nextSequence = try connection.prepare("SELECT int_value FROM meta WHERE name = 'next_sequence'")
            setNextSequence = try connection.prepare("UPDATE meta SET int_value = ? WHERE name = 'next_sequence'")
            insertEvent = try connection.prepare("""
                INSERT INTO events (sequence, idempotency_key, type, person_id, body, created_ms) VALUES (?, ?, ?, ?, ?, ?)
                """)
            // One pending delivery per configured sink.
            insertDeliveries = try connection.prepare("""
                INSERT INTO deliveries (sink, sequence, person_id, next_attempt_ms, updated_ms)
                SELECT name, ?1, ?2, ?3, ?3 FROM sinks WHERE configured = 1
                """)
            savePresence = try connection.prepare("INSERT OR REPLACE INTO presence (person_id, record) VALUES (?, ?)")
            deletePresence = try connection.prepare("DELETE FROM presence WHERE person_id = ?")
            loadPresence = try connection.prepare("SELECT person_id, record FROM presence")
            // Pending rows only, by the index that holds them in order (the primary key would
            // walk the sink's delivered rows too).
            pendingAfter = try connection.prepare("""
                SELECT sequence, person_id FROM deliveries INDEXED BY deliveries_by_state
                WHERE sink = ? AND state = 0 AND sequence > ? ORDER BY sequence
                """)
            pendingEntriesAfter = try connection.prepare("""
                SELECT \(Self.entryColumns) FROM events e JOIN deliveries d INDEXED BY deliveries_by_state ON d.sequence = e.sequence
                WHERE d.sink = ? AND d.state = 0 AND d.sequence > ? ORDER BY d.sequence LIMIT ?
                """)
            // Named: without it SQLite walks the sink's whole primary key in sequence order.
            pendingHead = try connection.prepare("""
                SELECT sequence FROM deliveries INDEXED BY deliveries_pending_by_person
                WHERE sink = ? AND state = 0 AND person_id = ? ORDER BY sequence LIMIT 1
                """)
            entry = try connection.prepare("SELECT \(Self.entryColumns) FROM \(Self.entryJoin) WHERE d.sink = ? AND e.sequence = ?")
            markFinal = try connection.prepare("""
                UPDATE deliveries SET state = ?, attempts = attempts + 1, last_status = ?, last_error = ?, updated_ms = ?
                WHERE sink = ? AND sequence = ? AND state = 0
                """)
            scheduleRetry = try connection.prepare("""
                UPDATE deliveries SET attempts = attempts + 1, next_attempt_ms = ?, last_status = ?, last_error = ?, updated_ms = ?
                WHERE sink = ? AND sequence = ? AND state = 0
                """)
            settledState = try connection.prepare("SELECT settled_state FROM events WHERE sequence = ?")
            settle = try connection.prepare(
                "UPDATE events SET (settled_state, settled_ms) = (\(Self.settledValues)) WHERE sequence = ? RETURNING settled_state")
            setMetaInt = try connection.prepare("INSERT OR REPLACE INTO meta (name, int_value) VALUES (?, ?)")
            meta = try connection.prepare("SELECT name, int_value, text_value FROM meta")
            sinks = try connection.prepare(
                "SELECT name, configured, last_success_ms, last_error_ms, last_error_class, last_error FROM sinks WHERE name = ?")
            configuredSinks = try connection.prepare("SELECT name FROM sinks WHERE configured = 1 ORDER BY name")
            sinkSucceeded = try connection.prepare("UPDATE sinks SET last_success_ms = ? WHERE name = ?")
            sinkFailed = try connection.prepare(
                "UPDATE sinks SET last_error_ms = ?, last_error_class = ?, last_error = ? WHERE name = ?")
            deliveriesBySinkAndState = try connection.prepare("SELECT sink, state, count(*) FROM deliveries GROUP BY sink, state")
            countEvents = try connection.prepare("SELECT count(*) FROM events")
            settledByState = try connection.prepare(
                "SELECT settled_state, count(*) FROM events WHERE settled_state IS NOT NULL GROUP BY settled_state")
            oldestPending = try connection.prepare("""
                SELECT e.created_ms FROM \(Self.entryJoin) WHERE d.sink = ? AND d.state = 0 ORDER BY d.sequence LIMIT 1
                """)
            oldestEvent = try connection.prepare("SELECT created_ms FROM events ORDER BY sequence LIMIT 1")
            dataVersion = try connection.prepare("PRAGMA data_version")
            anyPending = try connection.prepare("SELECT 1 FROM deliveries WHERE sink = ? AND state = 0 LIMIT 1")
        }
    }

    static func entry(from row: SQLiteStatement) -> OutboxEntry {
        OutboxEntry(
            sequence: row.int64(0),
            idempotencyKey: row.text(1),
            type: row.text(2),
            personId: row.text(3),
            body: row.blob(4),
            state: OutboxState(rawValue: Int32(truncatingIfNeeded: row.int64(5))),
            attempts: Int(truncatingIfNeeded: row.int64(6)),
            nextAttemptMillis: row.int64(7),
            lastStatus: row.optionalInt64(8).map { Int(truncatingIfNeeded: $0) },
            lastError: row.optionalText(9),
            createdAtMillis: row.int64(10),
            updatedAtMillis: row.int64(11),
            sink: row.text(12)
        )
    }
}
