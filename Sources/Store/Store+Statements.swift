extension Store {
    /// Every statement the store runs, prepared once.
    final class Statements {
        static let entryColumns = """
            sequence, idempotency_key, type, person_id, body, state, attempts, next_attempt_ms, \
            last_status, last_error, created_ms, updated_ms
            """

        let keyExists: SQLiteStatement
        let nextSequence: SQLiteStatement
        let setNextSequence: SQLiteStatement
        let insertEvent: SQLiteStatement
        let savePresence: SQLiteStatement
        let deletePresence: SQLiteStatement
        let loadPresence: SQLiteStatement
        let pendingAfter: SQLiteStatement
        let pendingHead: SQLiteStatement
        let entry: SQLiteStatement
        let markFinal: SQLiteStatement
        let scheduleRetry: SQLiteStatement
        let setMetaInt: SQLiteStatement
        let setMetaText: SQLiteStatement
        let meta: SQLiteStatement
        let countsByState: SQLiteStatement
        let oldestPending: SQLiteStatement
        let dataVersion: SQLiteStatement
        let anyPending: SQLiteStatement

        init(_ connection: SQLiteConnection) throws(StoreError) {
            keyExists = try connection.prepare("SELECT 1 FROM events WHERE idempotency_key = ?")
            nextSequence = try connection.prepare("SELECT int_value FROM meta WHERE name = 'next_sequence'")
            setNextSequence = try connection.prepare("UPDATE meta SET int_value = ? WHERE name = 'next_sequence'")
            insertEvent = try connection.prepare("""
                INSERT INTO events (sequence, idempotency_key, type, person_id, body, state, attempts,
                                    next_attempt_ms, created_ms, updated_ms)
                VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?, ?)
                """)
            savePresence = try connection.prepare("INSERT OR REPLACE INTO presence (person_id, record) VALUES (?, ?)")
            deletePresence = try connection.prepare("DELETE FROM presence WHERE person_id = ?")
            loadPresence = try connection.prepare("SELECT person_id, record FROM presence")
            pendingAfter = try connection.prepare(
                "SELECT sequence, person_id FROM events WHERE state = 0 AND sequence > ? ORDER BY sequence")
            pendingHead = try connection.prepare(
                "SELECT sequence FROM events WHERE state = 0 AND person_id = ? ORDER BY sequence LIMIT 1")
            entry = try connection.prepare("SELECT \(Self.entryColumns) FROM events WHERE sequence = ?")
            markFinal = try connection.prepare("""
                UPDATE events SET state = ?, attempts = attempts + 1, last_status = ?, last_error = ?, updated_ms = ?
                WHERE sequence = ? AND state = 0
                """)
            scheduleRetry = try connection.prepare("""
                UPDATE events SET attempts = attempts + 1, next_attempt_ms = ?, last_status = ?, last_error = ?, updated_ms = ?
                WHERE sequence = ? AND state = 0
                """)
            setMetaInt = try connection.prepare("INSERT OR REPLACE INTO meta (name, int_value) VALUES (?, ?)")
            setMetaText = try connection.prepare("INSERT OR REPLACE INTO meta (name, text_value) VALUES (?, ?)")
            meta = try connection.prepare("SELECT name, int_value, text_value FROM meta")
            countsByState = try connection.prepare("SELECT state, count(*) FROM events GROUP BY state")
            oldestPending = try connection.prepare(
                "SELECT created_ms FROM events WHERE state = 0 ORDER BY sequence LIMIT 1")
            dataVersion = try connection.prepare("PRAGMA data_version")
            anyPending = try connection.prepare("SELECT 1 FROM events WHERE state = 0 LIMIT 1")
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
            updatedAtMillis: row.int64(11)
        )
    }
}
