import XCTest
@testable import Store

/// Event commits always run with synchronous=FULL, whatever happened to the relaxed
/// bookkeeping transactions before them.
final class StoreDurabilityTests: StoreTestCase {
    private func synchronous(_ store: Store) throws -> Int64 {
        var level: Int64 = -1
        try store.connection.prepare("PRAGMA synchronous").query { row in
            level = row.int64(0)
            return false
        }
        return level
    }

    func testAFailedBookkeepingTransactionLeavesSynchronousFull() throws {
        let store = try open(StoreConfiguration(busyTimeoutMillis: 10))
        try append(store, key: "a")
        XCTAssertEqual(try synchronous(store), 2, "FULL after opening")
        // Another process holds the write lock: BEGIN IMMEDIATE of the bookkeeping fails.
        let other = try SQLiteConnection(path: path, busyTimeoutMillis: 0)
        try other.execute("BEGIN IMMEDIATE")
        XCTAssertThrowsError(try store.markSent(sequence: 1, status: 201, atMillis: 5))
        XCTAssertEqual(try synchronous(store), 2, "the next event commit must wait for the disk")
        try other.execute("COMMIT")
        try store.markSent(sequence: 1, status: 201, atMillis: 6)
        XCTAssertEqual(try synchronous(store), 2)
    }

    func testInspectionOpensReadOnlyAndCreatesNothing() throws {
        XCTAssertThrowsError(try Store(path: path, readOnly: true)) { error in
            XCTAssertEqual(error as? StoreError, .noOutbox(path: path))
        }
        XCTAssertNotEqual(access(path, F_OK), 0, "no file was created")
        let store = try open()
        try append(store, key: "a")
        let reader = try Store(path: path, readOnly: true)
        XCTAssertEqual(try reader.status(nowMillis: 0).pending, 1)
        XCTAssertThrowsError(try reader.retryDead(nowMillis: 0), "a read-only store refuses writes")
    }
}
