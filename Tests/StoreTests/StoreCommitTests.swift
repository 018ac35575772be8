import XCTest
@testable import Store

final class StoreCommitTests: StoreTestCase {
    func testSchemaVersionAndWAL() throws {
        let store = try open()
        let check = try store.connection.prepare("PRAGMA journal_mode")
        var mode = ""
        try check.query { row in mode = row.text(0); return false }
        XCTAssertEqual(mode, "wal")
        let version = try store.connection.prepare("PRAGMA user_version")
        var found: Int64 = -1
        try version.query { row in found = row.int64(0); return false }
        XCTAssertEqual(found, Int64(Store.schemaVersion))
        XCTAssertEqual(try store.integrityCheck(), "ok")
    }

    func testNewerSchemaIsRefused() throws {
        do {
            let store = try open()
            try store.connection.execute("PRAGMA user_version = 99")
        }
        XCTAssertThrowsError(try open()) { error in
            XCTAssertEqual(error as? StoreError, .unsupportedSchema(found: 99, supported: Store.schemaVersion))
        }
    }

    func testMissingDirectoryIsATypedError() {
        XCTAssertThrowsError(try Store(path: directory + "/missing/gateway.sqlite")) { error in
            guard case .open = error as? StoreError else { return XCTFail("\(error)") }
        }
    }

    func testSequencesAreGapFreeAndSurviveReopen() throws {
        var sequences: [Int64] = []
        do {
            let store = try open()
            for index in 0 ..< 5 { sequences.append(try XCTUnwrap(try append(store, key: "k\(index)"))) }
        }
        let store = try open()
        for index in 5 ..< 8 { sequences.append(try XCTUnwrap(try append(store, key: "k\(index)"))) }
        XCTAssertEqual(sequences, Array(1 ... 8))
        // The body was rendered with the allocated sequence.
        let entry = try XCTUnwrap(try store.entry(sequence: 7))
        XCTAssertEqual(String(decoding: entry.body, as: UTF8.self), "{\"sequence\": 7, \"key\": \"k6\"}")
        XCTAssertEqual(try store.status(nowMillis: 0).lastSequence, 8)
    }

    func testSequenceIsNeverReusedAfterPruning() throws {
        let store = try open(StoreConfiguration(deliveredRetentionMillis: 10))
        try append(store, key: "a")
        try append(store, key: "b")
        try store.markSent(sequence: 2, status: 201, atMillis: 1_000)
        XCTAssertEqual(try store.pruneDelivered(nowMillis: 5_000), 1)
        XCTAssertEqual(try append(store, key: "c"), 3)
    }

    func testDuplicateKeyInsertsNothing() throws {
        let store = try open()
        XCTAssertEqual(try append(store, key: "same"), 1)
        XCTAssertNil(try append(store, key: "same"))
        XCTAssertEqual(try append(store, key: "other"), 2)
        XCTAssertEqual(try store.status(nowMillis: 0).pending, 2)
    }

    func testFailedTransactionStoresNothingAndAllocatesNoSequence() throws {
        let store = try open()
        struct Boom: Error {}
        XCTAssertThrowsError(try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
            _ = try transaction.appendEvent(idempotencyKey: "x", type: "checkin", personId: "u_1", createdAtMillis: 1) { _ in [] }
            try transaction.savePresence(personId: "u_1", record: [1, 2, 3])
            throw StoreError.corruptRow("simulated failure")
        })
        XCTAssertEqual(try store.loadPresence(), [:])
        XCTAssertNil(try store.entry(sequence: 1))
        XCTAssertEqual(try append(store, key: "x"), 1)
    }

    func testPresenceIsCommittedWithTheEvent() throws {
        do {
            let store = try open()
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                _ = try transaction.appendEvent(idempotencyKey: "in", type: "checkin", personId: "u_1", createdAtMillis: 1) { _ in [0x7B, 0x7D] }
                try transaction.savePresence(personId: "u_1", record: [1, 2, 3])
                try transaction.savePresence(personId: "u_2", record: [9])
            }
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                try transaction.deletePresence(personId: "u_2")
                try transaction.savePresence(personId: "u_1", record: [4])
            }
        }
        let store = try open()
        XCTAssertEqual(try store.loadPresence(), ["u_1": [4]])
    }

    func testNestedCommitIsRefused() throws {
        let store = try open()
        var inner: StoreError?
        try store.commit { (_: inout StoreTransaction) throws(StoreError) in
            do throws(StoreError) {
                try store.commit { (_: inout StoreTransaction) throws(StoreError) in }
            } catch {
                inner = error
            }
        }
        XCTAssertEqual(inner, .nestedTransaction)
    }

    func testCapRefusesNewEventsButNeverDropsOld() throws {
        let store = try open(StoreConfiguration(maximumEvents: 3))
        for index in 0 ..< 3 { try append(store, key: "k\(index)") }
        XCTAssertThrowsError(try append(store, key: "k3")) { error in
            XCTAssertEqual(error as? StoreError, .outboxFull(undelivered: 3, maximum: 3))
        }
        XCTAssertEqual(try store.status(nowMillis: 0).pending, 3)
        // Delivered rows do not count: once one is sent there is room again.
        try store.markSent(sequence: 1, status: 201, atMillis: 5)
        XCTAssertEqual(try append(store, key: "k3"), 4)
        // Dead letters do count: they are still undelivered.
        try store.markDead(sequence: 2, status: 400, error: "HTTP 400", atMillis: 6)
        XCTAssertThrowsError(try append(store, key: "k4"))
    }

    func testCapCountsWhatAnotherConnectionDelivered() throws {
        let store = try open(StoreConfiguration(maximumEvents: 2))
        try append(store, key: "a")
        try append(store, key: "b")
        let other = try open()
        try other.markSent(sequence: 1, status: 200, atMillis: 1)
        XCTAssertEqual(try append(store, key: "c"), 3)
    }

    func testAtTheCapEveryRefusalCostsTheSameUntilSomethingWasDelivered() throws {
        let store = try open(StoreConfiguration(maximumEvents: 2))
        try append(store, key: "a")
        try append(store, key: "b")
        XCTAssertThrowsError(try append(store, key: "c"))
        let before = store.statementSteps
        XCTAssertThrowsError(try append(store, key: "c"))
        let oneRefusal = store.statementSteps - before
        for _ in 0 ..< 100 { XCTAssertThrowsError(try append(store, key: "c")) }
        XCTAssertEqual(store.statementSteps - before, 101 * oneRefusal, "refused without a count(*) each time")
        // Another process delivers: counted again, and there is room.
        let other = try open()
        try other.markSent(sequence: 1, status: 200, atMillis: 1)
        XCTAssertEqual(try append(store, key: "c"), 3)
        XCTAssertThrowsError(try append(store, key: "d"))
        // This process delivers: counted again too.
        try store.markSent(sequence: 2, status: 201, atMillis: 2)
        XCTAssertEqual(try append(store, key: "d"), 4)
    }
}
