import XCTest
@testable import Store

final class StoreRelaxedCommitTests: StoreTestCase {
    /// What a relaxed commit saved is there for the next process (a `kill -9` loses
    /// nothing the kernel already has), and commits after it are synchronous again.
    func testRelaxedPresenceIsStoredAndLaterCommitsAreFullySynchronous() throws {
        do {
            let store = try open()
            try store.commitRelaxed { (transaction: inout StoreTransaction) throws(StoreError) in
                try transaction.savePresence(personId: "#last-heard", record: [1, 2])
                try transaction.savePresence(personId: "u_1", record: [3])
            }
            XCTAssertEqual(try synchronous(store), 2, "FULL again after the relaxed transaction")
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                try transaction.deletePresence(personId: "u_1")
            }
        }
        let store = try open()
        XCTAssertEqual(try store.loadPresence(), ["#last-heard": [1, 2]])
    }

    func testAFailedRelaxedCommitStoresNothing() throws {
        let store = try open()
        XCTAssertThrowsError(try store.commitRelaxed { (transaction: inout StoreTransaction) throws(StoreError) in
            try transaction.savePresence(personId: "u_1", record: [3])
            throw StoreError.corruptRow("test")
        })
        XCTAssertEqual(try store.loadPresence(), [:])
        XCTAssertEqual(try synchronous(store), 2)
    }

    private func synchronous(_ store: Store) throws -> Int64 {
        var value: Int64 = -1
        try store.connection.prepare("PRAGMA synchronous").query { row in
            value = row.int64(0)
            return false
        }
        return value
    }
}
