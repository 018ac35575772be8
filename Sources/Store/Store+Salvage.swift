/// A damaged database (docs/reliability.md, "Disk trouble"): looked at before anything is
/// moved, and when it is damaged, moved aside with every undelivered event and presence
/// record that can still be read copied into the fresh one, under their own sequences and
/// keys (receivers dedupe by key). A salvaged event is pending for every configured sink of
/// the fresh outbox, whatever the damaged one said of its deliveries: what cannot be
/// trusted is delivered again rather than lost.

/// What a salvage copied out of a damaged database.
public struct SalvageReport: Hashable, Sendable {
    /// Undelivered events (pending for a sink, or a dead letter) copied, with their own
    /// sequence and key.
    public var events = 0
    /// Presence records copied.
    public var presence = 0
    /// Stretches of the events table that could not be read and were stepped over: their
    /// rows, if there were any, are lost.
    public var unreadableStretches = 0
    /// The damaged file could not be opened at all.
    public var unreadable = false

    public init() {}
}

/// What looking at a database reported corrupt found.
public enum DamageVerdict: Equatable, Sendable {
    /// `integrity_check` finds nothing: the error did not come from the file's structure.
    case sound
    /// Tables or indexes are damaged (or the file does not open): it has to go. Rows the
    /// tables still give are salvaged, so an index broken alone loses nothing.
    case damaged(String)
}

extension Store {
    /// Looks at the database at `path` (no connection of this process may have it open):
    /// `integrity_check`, which also compares every index with its table. It reads the
    /// whole file, so it runs only after an operation reported corruption.
    public static func examine(path: String) -> DamageVerdict {
        guard let connection = try? SQLiteConnection(path: path, busyTimeoutMillis: 1_000, readOnly: true),
              let check = try? connection.prepare("PRAGMA integrity_check(20)") else {
            return .damaged("cannot be opened")
        }
        var lines: [String] = []
        do {
            try check.query { row in
                lines.append(row.text(0))
                return true
            }
        } catch {
            lines.append(error.description)
        }
        return lines == ["ok"] ? .sound : .damaged(lines.first ?? "integrity_check failed")
    }

    /// Copies what can be read of the damaged database at `damagedPath` into this store
    /// (freshly made in its place): undelivered events first by their own sequence, reading
    /// the table itself (a broken index must hide nothing) and stepping over stretches that
    /// cannot be read; then presence records. Durable before it returns.
    public func salvage(from damagedPath: String, upTo lastSequence: Int64?) -> SalvageReport {
        var report = SalvageReport()
        guard let source = try? SQLiteConnection(path: damagedPath, busyTimeoutMillis: 0, readOnly: true) else {
            report.unreadable = true
            return report
        }
        // Version 1 kept the server's state in `events`; version 2 settles an event once
        // every configured sink has it.
        var sourceVersion: Int64 = 0
        try? source.prepare("PRAGMA user_version").query { row in
            sourceVersion = row.int64(0)
            return false
        }
        let undelivered = sourceVersion < 2 ? "state IN (0, 3)" : "(settled_state IS NULL OR settled_state = 3)"
        guard let read = try? source.prepare("""
                SELECT sequence, idempotency_key, type, person_id, body, created_ms FROM events NOT INDEXED
                WHERE sequence > ? AND \(undelivered) ORDER BY sequence LIMIT 500
                """),
              let insert = try? connection.prepare(
                "INSERT OR IGNORE INTO events (sequence, idempotency_key, type, person_id, body, created_ms) VALUES (?, ?, ?, ?, ?, ?)")
        else {
            report.unreadable = true
            return report
        }
        var after: Int64 = 0
        var step: Int64 = 1
        var failuresInARow = 0
        let end = lastSequence ?? Int64.max
        // In batches of 500, each one durable transaction: memory stays bounded whatever
        // the backlog.
        while after < end {
            var rows: [[SQLiteStatement.Value]] = []
            var failed = false
            do {
                try read.query([.integer(after)]) { row in
                    rows.append([.integer(row.int64(0)), .text(row.text(1)), .text(row.text(2)), .text(row.text(3)),
                                 .blob(row.blob(4)), .integer(row.int64(5))])
                    return true
                }
            } catch {
                failed = true
            }
            if !rows.isEmpty, (try? copy(rows, with: insert, deliveries: true)) != nil {
                report.events += rows.count
                if case let .integer(last) = rows[rows.count - 1][0] { after = last }
            }
            if failed {
                // An unreadable page: step over it, further each time it goes on (up to
                // about a trillion sequences past the last row read, then give up).
                report.unreadableStretches += 1
                failuresInARow += 1
                if failuresInARow > 40 { break }
                let (next, overflow) = after.addingReportingOverflow(step)
                after = overflow ? end : next
                step = min(step * 2, 1 << 40)
                continue
            }
            step = 1
            failuresInARow = 0
            if rows.count < 500 { break }
        }
        if let records = try? source.prepare("SELECT person_id, record FROM presence"),
           let save = try? connection.prepare("INSERT OR REPLACE INTO presence (person_id, record) VALUES (?, ?)") {
            var saved: [[SQLiteStatement.Value]] = []
            try? records.query { row in
                saved.append([.text(row.text(0)), .blob(row.blob(1))])
                return true
            }
            if (try? copy(saved, with: save)) != nil { report.presence = saved.count }
        }
        // Counted again from the table: the rows came in behind the counts' back.
        stateCounts = nil
        return report
    }

    /// Copies `rows` in one transaction; `deliveries`: they are events (sequence, key,
    /// type, person, body, created), each made pending for every configured sink.
    private func copy(_ rows: [[SQLiteStatement.Value]], with statement: SQLiteStatement, deliveries: Bool = false) throws(StoreError) {
        guard !rows.isEmpty else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for row in rows {
                try statement.run(row)
                if deliveries, connection.changes > 0 { try statements.insertDeliveries.run([row[0], row[3], row[5]]) }
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
