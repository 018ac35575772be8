#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import Store

/// Schema version 1 → 2 (docs/event-api.md, "The outbox on disk"), on a real version-1
/// file: `Fixtures/outbox-v1.sqlite` was written by the store as it was at version 1
/// (commit 250be6f): event 1 sent (201), 2 rejected (409), 3 a dead letter (422), 4 held
/// in a retry wait (503, due at 60,000 ms), 5 pending, 6 pending behind 4 (same person),
/// the server's last outcomes in `meta`, one presence record.
final class StoreMigrationTests: StoreTestCase {
    static let fixture = String(#filePath).split(separator: "/").dropLast().joined(separator: "/")
        .withLeadingSlash + "/Fixtures/outbox-v1.sqlite"

    func copy(_ source: String, to target: String) {
        let input = Glibc.open(source, O_RDONLY)
        guard input >= 0 else { return }
        defer { close(input) }
        let output = Glibc.open(target, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(output, 0)
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(input, &buffer, buffer.count)
            if count <= 0 { break }
            XCTAssertEqual(Glibc.write(output, buffer, count), count)
        }
    }

    func version(of path: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: path, busyTimeoutMillis: 1_000, readOnly: true)
        var version: Int64 = -1
        try connection.prepare("PRAGMA user_version").query { row in
            version = row.int64(0)
            return false
        }
        return version
    }

    func testAVersionOneOutboxBecomesTheServersProgress() throws {
        copy(Self.fixture, to: path)
        XCTAssertEqual(try version(of: path), 1)
        XCTAssertThrowsError(try Store(path: path, readOnly: true), "inspection does not upgrade") { error in
            XCTAssertEqual(error as? StoreError, .schemaUpgradePending(found: 1, current: 2))
        }
        let store = try open()
        XCTAssertEqual(try version(of: path), 2)
        XCTAssertEqual(try store.configuredSinks(), ["server"])
        XCTAssertEqual(try store.list(states: [.sent], limit: 10).map(\.idempotencyKey), ["sent"])
        let rejected = try XCTUnwrap(try store.list(states: [.rejected], limit: 10).first)
        XCTAssertEqual([rejected.idempotencyKey, rejected.lastError], ["rejected", "HTTP 409: refused by server policy"])
        XCTAssertEqual(rejected.lastStatus, 409)
        let dead = try XCTUnwrap(try store.list(states: [.dead], limit: 10).first)
        XCTAssertEqual([dead.idempotencyKey, dead.lastError], ["dead", "HTTP 422"])
        XCTAssertEqual(dead.updatedAtMillis, 2_000)
        XCTAssertEqual(try store.list(states: [.pending], limit: 10).map(\.idempotencyKey), ["held", "pending", "behind-held"])
        let held = try XCTUnwrap(try store.entry(sequence: 4))
        XCTAssertEqual(held.attempts, 1)
        XCTAssertEqual(held.nextAttemptMillis, 60_000)
        XCTAssertEqual(held.lastError, "HTTP 503")
        XCTAssertEqual(held.body, Array("{\"sequence\": 4, \"key\": \"held\"}".utf8))
        XCTAssertEqual(try store.pendingHead(personId: "u_d"), 4, "the held event still heads its person's queue")

        let status = try store.status(sink: "server", nowMillis: 3_000)
        XCTAssertEqual([status.pending, status.sent, status.rejected, status.dead], [3, 1, 1, 1])
        XCTAssertEqual(status.lastSuccessMillis, 2_000)
        XCTAssertEqual(status.lastErrorMillis, 2_000)
        XCTAssertEqual(status.lastErrorClass, .server)
        XCTAssertEqual(status.lastError, "HTTP 503")
        XCTAssertEqual(status.lastSequence, 6)
        XCTAssertEqual(try store.loadPresence()["u_a"], [1, 2, 3])
        XCTAssertEqual(try append(store, key: "after", person: "u_f", at: 4_000), 7, "the sequence goes on")

        // Retention sees the server's settled rows: sent and rejected after a week, the
        // dead letter after a month, pending ones never.
        let policy = RetentionPolicy.forDoor(hasSinks: true)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 2_000 + 7 * RetentionPolicy.day + 1, policy: policy).pruned,
                       PrunedRows(sent: 1, rejected: 1))
        XCTAssertEqual(try store.pruneBatch(nowMillis: 2_000 + 30 * RetentionPolicy.day + 1, policy: policy).pruned,
                       PrunedRows(dead: 1))
        XCTAssertEqual(try store.list(states: Set(OutboxState.allCases), limit: 10).map(\.sequence), [4, 5, 6, 7])
        XCTAssertEqual(Store.examine(path: path), .sound)
    }

    /// A kill during the migration: the files as they are on disk after each of its
    /// statements (what a kill -9 or a power cut at that point leaves) open as version 1,
    /// whole, and migrate from there.
    func testAMigrationKilledAtAnyStatementLeavesVersionOne() throws {
        copy(Self.fixture, to: path)
        let connection = try SQLiteConnection(path: path, busyTimeoutMillis: 1_000)
        try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
        var killedAt: [String] = []
        try Store.migrate(connection, firstSequence: 1) { step, index throws(StoreError) in
            let crashed = directory + "/killed-\(step)-\(index).sqlite"
            for suffix in ["", "-wal"] { copy(path + suffix, to: crashed + suffix) }
            killedAt.append(crashed)
        }
        XCTAssertEqual(killedAt.count, 2, "the step's statements and the version stamp")
        for crashed in killedAt {
            XCTAssertEqual(try version(of: crashed), 1, crashed)
            XCTAssertEqual(Store.examine(path: crashed), .sound, crashed)
            let old = try SQLiteConnection(path: crashed, busyTimeoutMillis: 1_000, readOnly: true)
            var states: [Int64] = []
            try old.prepare("SELECT state FROM events ORDER BY sequence").query { row in
                states.append(row.int64(0))
                return true
            }
            XCTAssertEqual(states, [1, 2, 3, 0, 0, 0], crashed)
            let store = try Store(path: crashed)
            XCTAssertEqual(try store.status(sink: "server", nowMillis: 3_000).pending, 3, crashed)
            XCTAssertEqual(try store.list(states: [.dead], limit: 10).map(\.sequence), [3], crashed)
        }
        XCTAssertEqual(try version(of: path), 2)
    }

    /// A migration that fails half-way (a full disk) rolls back to version 1 whole.
    func testAFailedMigrationLeavesVersionOneWhole() throws {
        copy(Self.fixture, to: path)
        let connection = try SQLiteConnection(path: path, busyTimeoutMillis: 1_000)
        try connection.execute("PRAGMA journal_mode=WAL")
        XCTAssertThrowsError(try Store.migrate(connection, firstSequence: 1) { _, index throws(StoreError) in
            if index == 0 { throw StoreError.sqlite(code: 13, message: "database or disk is full") }
        })
        XCTAssertEqual(try version(of: path), 1)
        XCTAssertEqual(Store.examine(path: path), .sound)
        let store = try open()
        XCTAssertEqual(try store.status(sink: "server", nowMillis: 3_000).pending, 3)
    }

    /// A new file is made in one transaction up to the current version: what a kill, or a
    /// reader such as `outbox export` while the agent starts, finds at each of its
    /// statements is no schema at all (version 0: "no outbox yet"), never version 1.
    func testANewOutboxIsNothingOrCurrentAtEveryStatement() throws {
        let connection = try SQLiteConnection(path: path, busyTimeoutMillis: 1_000)
        try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
        var stamped: Set<Int32> = []
        var seen: [String: Int64] = [:]
        try Store.migrate(connection, firstSequence: 1) { step, index throws(StoreError) in
            stamped.insert(step)
            let reader = try SQLiteConnection(path: path, busyTimeoutMillis: 1_000, readOnly: true)
            var version: Int64 = -1
            try reader.prepare("PRAGMA user_version").query { row in
                version = row.int64(0)
                return false
            }
            seen["statement \(index)"] = version
        }
        XCTAssertEqual(stamped, [Store.schemaVersion], "one transaction, stamping the current version")
        XCTAssertGreaterThan(seen.count, 2, "version 1, every step and the stamp")
        XCTAssertEqual(Set(seen.values), [0], "\(seen)")
        XCTAssertEqual(try version(of: path), Int64(Store.schemaVersion))
    }

    func testANewOutboxIsMadeByTheSameSteps() throws {
        let store = try open()
        XCTAssertEqual(try version(of: path), Int64(Store.schemaVersion))
        XCTAssertEqual(try store.configuredSinks(), ["server"])
        var tables: [String] = []
        try store.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").query { row in
            tables.append(row.text(0))
            return true
        }
        XCTAssertEqual(tables, ["deliveries", "events", "meta", "presence", "sinks"])
    }
}

private extension String {
    var withLeadingSlash: String { hasPrefix("/") ? self : "/" + self }
}
