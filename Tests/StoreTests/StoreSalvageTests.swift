#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import Store

/// A dying card (docs/reliability.md, "Disk trouble"): a database reported corrupt is
/// examined, and when damaged moved aside with every undelivered event and presence
/// record still readable copied into the fresh one.
final class StoreSalvageTests: StoreTestCase {
    /// A store with `count` pending events (keys `k1…`), the first `sent` of them sent,
    /// and one presence record; checkpointed into the main file and closed.
    func makeStore(count: Int, sent: Int = 0) throws -> (rootPages: [String: Int], pageCount: Int) {
        let store = try open()
        try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
            for index in 1 ... count {
                _ = try transaction.appendEvent(idempotencyKey: "k\(index)", type: "checkin", personId: "p\(index % 7)",
                                                createdAtMillis: 1_000) { sequence in
                    Array("{\"sequence\": \(sequence), \"padding\": \"\(String(repeating: "x", count: 200))\"}".utf8)
                }
            }
            try transaction.savePresence(personId: "p1", record: [1, 2, 3])
        }
        if sent > 0 { try store.record((1 ... sent).map { .sent(sequence: Int64($0), status: 201) }, atMillis: 2_000) }
        try store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        var roots: [String: Int] = [:]
        try store.connection.prepare("SELECT name, rootpage FROM sqlite_master").query { row in
            roots[row.text(0)] = Int(row.int64(1))
            return true
        }
        var pages = 0
        try store.connection.prepare("PRAGMA page_count").query { row in
            pages = Int(row.int64(0))
            return false
        }
        return (roots, pages)
    }

    func overwrite(page: Int) {
        let fd = Glibc.open(path, O_WRONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let garbage = [UInt8](repeating: 0xA5, count: 4096)
        XCTAssertEqual(garbage.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4096, off_t((page - 1) * 4096)) }, 4096)
        close(fd)
    }

    func keys(_ store: Store, _ state: OutboxState) throws -> [String] {
        try store.list(states: [state], limit: 100_000).map(\.idempotencyKey)
    }

    func testABrokenIndexPageLosesNothingUndelivered() throws {
        let (roots, _) = try makeStore(count: 100, sent: 5)
        overwrite(page: try XCTUnwrap(roots["deliveries_by_state"]))
        XCTAssertNotEqual(Store.examine(path: path), .sound)
        let (store, recovery) = try Store.recover(path: path, suffix: "20261127T120000Z",
                                                  reason: .corruptRow("the forwarder's read"))
        guard case let .movedAside(moved) = recovery else { return XCTFail("\(recovery)") }
        XCTAssertEqual(moved.salvage.events, 95, "every undelivered event")
        XCTAssertEqual(moved.salvage.presence, 1)
        XCTAssertEqual(moved.salvage.unreadableStretches, 0)
        XCTAssertEqual(try keys(store, .pending), (6 ... 100).map { "k\($0)" }, "same keys, same order")
        XCTAssertEqual(try store.list(states: [.pending], limit: 1).first?.sequence, 6, "their own sequences")
        XCTAssertEqual(try store.loadPresence()["p1"], [1, 2, 3])
        XCTAssertEqual(try store.status(nowMillis: 3_000).pending, 95)
        // New events continue above every sequence the damaged file handed out.
        let next = try XCTUnwrap(try append(store, key: "new"))
        XCTAssertGreaterThan(next, 100)
        XCTAssertEqual(Store.examine(path: path), .sound)
    }

    func testADamagedTablePageLosesOnlyWhatItHeld() throws {
        let (_, pages) = try makeStore(count: 2_000)
        // A page in the middle of the file: one of the events table's leaves (the
        // bodies make the table most of the file).
        let victim = pages / 2
        overwrite(page: victim)
        let (store, recovery) = try Store.recover(path: path, suffix: "20261127T120000Z", reason: .corruptRow("a commit"))
        guard case let .movedAside(moved) = recovery else { return XCTFail("\(recovery)") }
        XCTAssertGreaterThanOrEqual(moved.salvage.unreadableStretches, 1)
        XCTAssertLessThan(moved.salvage.events, 2_000)
        // A 4 KiB leaf holds about 15 of these rows; the salvage steps over little more.
        XCTAssertGreaterThanOrEqual(moved.salvage.events, 2_000 - 64, "\(moved.salvage)")
        let salvaged = try keys(store, .pending)
        XCTAssertEqual(salvaged.count, moved.salvage.events)
        XCTAssertEqual(Set(salvaged).count, salvaged.count)
    }

    func testADatabaseFoundSoundIsKept() throws {
        _ = try makeStore(count: 10)
        let (store, recovery) = try Store.recover(path: path, suffix: "x", reason: .corruptRow("a flaky read"))
        XCTAssertEqual(recovery, .sound)
        XCTAssertEqual(try store.status(nowMillis: 0).pending, 10)
        XCTAssertFalse(fileNames().contains { $0.contains("corrupt") })
        // Told not to trust it twice: moved aside, nothing lost.
        let (again, second) = try Store.recover(path: path, suffix: "y", reason: .corruptRow("again"), examining: false)
        guard case let .movedAside(moved) = second else { return XCTFail("\(second)") }
        XCTAssertEqual(moved.salvage.events, 10)
        XCTAssertEqual(try again.status(nowMillis: 0).pending, 10)
    }

    func testOnlyTheNewestSetAsideCopiesStay() throws {
        for stamp in ["20260101T000000Z", "20260201T000000Z", "20260301T000000Z", "20260401T000000Z"] {
            write([0x42], to: path + ".corrupt-" + stamp)
            write([0x42], to: path + ".corrupt-" + stamp + "-wal")
        }
        _ = try makeStore(count: 3)
        overwrite(page: 1)
        let (_, recovery) = try Store.recover(path: path, suffix: "20261127T120000Z", reason: .corruptRow("x"))
        guard case let .movedAside(moved) = recovery else { return XCTFail("\(recovery)") }
        XCTAssertEqual(moved.copiesRemoved.map { String($0.split(separator: "-").last ?? "") }.sorted(),
                       ["20260101T000000Z", "20260201T000000Z"])
        let copies = fileNames().filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        XCTAssertEqual(copies.count, 3)
        XCTAssertFalse(fileNames().contains("gateway.sqlite.corrupt-20260101T000000Z-wal"))
    }
}
