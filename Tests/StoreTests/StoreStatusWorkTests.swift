import XCTest
@testable import Store

/// `status` runs on every status tick and heartbeat: its work (SQLite steps, counted,
/// not timed) must not grow with the outbox, and its counts must be what a fresh count
/// of the table says, whoever changed it.
final class StoreStatusWorkTests: StoreTestCase {
    /// `total` events committed, all but the last `pending` delivered; then the steps of
    /// one status tick after a new event and a delivery outcome of this connection.
    private func stepsOfAStatusTick(total: Int, pending: Int) throws -> Int {
        let store = try open()
        let body = [UInt8](repeating: 0x61, count: 200)
        var next = 0
        while next < total {
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                for _ in 0 ..< min(1_000, total - next) {
                    _ = try transaction.appendEvent(idempotencyKey: "k\(next)", type: "checkin", personId: "p\(next % 50)", createdAtMillis: 1) { _ in body }
                    next += 1
                }
            }
        }
        var delivered = 0
        while delivered < total - pending {
            let batch = (delivered ..< min(delivered + 1_000, total - pending)).map { DeliveryRecord.sent(sequence: Int64($0 + 1), status: 201) }
            try store.record(batch, atMillis: 2)
            delivered += batch.count
        }
        XCTAssertEqual(try store.status(nowMillis: 3).pending, pending)
        try append(store, key: "new", person: "q")
        try store.markSent(sequence: Int64(total - pending + 1), status: 201, atMillis: 4)
        let before = store.statementSteps
        let status = try store.status(nowMillis: 5)
        let steps = store.statementSteps - before
        XCTAssertEqual([status.pending, status.sent, status.rejected, status.dead], [pending, total - pending + 1, 0, 0])
        return steps
    }

    func testStatusWorkStaysFlatFromTenToHundredThousandEvents() throws {
        let small = try stepsOfAStatusTick(total: 10, pending: 5)
        try tearDownWithError()
        try setUpWithError()
        let large = try stepsOfAStatusTick(total: 100_000, pending: 5)
        XCTAssertGreaterThan(small, 0)
        XCTAssertEqual(large, small)
    }

    func testFirstStatusCountsTheTable() throws {
        // The counting pass itself is O(rows): the steps show it, so the test above can fail.
        let store = try open()
        for index in 0 ..< 200 { try append(store, key: "k\(index)", person: "p\(index)") }
        let reopened = try open()
        let before = reopened.statementSteps
        XCTAssertEqual(try reopened.status(nowMillis: 2).pending, 200)
        XCTAssertGreaterThan(reopened.statementSteps - before, 200)
    }

    func testCountsFollowOwnChangesAndOtherConnections() throws {
        let store = try open(StoreConfiguration(deliveredRetentionMillis: 1_000))
        for index in 1 ... 6 { try append(store, key: "k\(index)", person: "p\(index)") }
        try assertCountsMatchAFreshCount(store)
        try store.record([.sent(sequence: 1, status: 201), .rejected(sequence: 2, status: 409),
                          .dead(sequence: 3, status: 422, error: "HTTP 422"),
                          .retry(sequence: 4, atMillis: 9_000, errorClass: .server, error: "HTTP 503")], atMillis: 1_000)
        try assertCountsMatchAFreshCount(store)
        // An outcome for an event no longer pending changes nothing.
        try store.markSent(sequence: 3, status: 201, atMillis: 1_500)
        try assertCountsMatchAFreshCount(store)
        XCTAssertEqual(try store.retryDead(nowMillis: 2_000), 1)
        try assertCountsMatchAFreshCount(store)
        XCTAssertEqual(try store.pruneDelivered(nowMillis: 10_000), 2)
        try assertCountsMatchAFreshCount(store)
        try store.commitRelaxed { (transaction: inout StoreTransaction) throws(StoreError) in
            _ = try transaction.appendEvent(idempotencyKey: "relaxed", type: "checkin", personId: "r", createdAtMillis: 1) { _ in [0x7B, 0x7D] }
        }
        try assertCountsMatchAFreshCount(store)
        // Another process (the `outbox` command) writes: counted again.
        let other = try open()
        try other.markDead(sequence: 5, status: 400, error: "HTTP 400", atMillis: 11_000)
        try append(other, key: "elsewhere", person: "e")
        try assertCountsMatchAFreshCount(store)
        // A failed transaction changes no count.
        XCTAssertThrowsError(try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
            _ = try transaction.appendEvent(idempotencyKey: "rolled-back", type: "checkin", personId: "x", createdAtMillis: 1) { _ in [0x7B, 0x7D] }
            throw StoreError.corruptRow("test")
        })
        try assertCountsMatchAFreshCount(store)
    }

    private func assertCountsMatchAFreshCount(_ store: Store, line: UInt = #line) throws {
        let kept = try store.status(nowMillis: 20_000)
        let fresh = try open().status(nowMillis: 20_000)
        XCTAssertEqual([kept.pending, kept.sent, kept.rejected, kept.dead], [fresh.pending, fresh.sent, fresh.rejected, fresh.dead], line: line)
    }
}
