import XCTest
@testable import Store

/// The outbox cap is checked on every append: its work (SQLite steps, counted, not timed)
/// must not grow with the undelivered events already stored, neither on the way up nor
/// when it refuses.
final class StoreCapWorkTests: StoreTestCase {
    /// The steps of 5,000 appends in one commit on top of `undelivered` pending events (an
    /// earlier recount ran every 4,096 appends), then of the refusal that meets the cap.
    private func stepsOfAppendingUpToTheCap(undelivered: Int) throws -> (appends: Int, refusal: Int) {
        let appends = 5_000
        let store = try open(StoreConfiguration(maximumEvents: undelivered + appends))
        let body = [UInt8](repeating: 0x61, count: 100)
        var next = 0
        func commit(_ count: Int) throws {
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                for _ in 0 ..< count {
                    let sequence = try transaction.appendEvent(idempotencyKey: "k\(next)", type: "checkin", personId: "p\(next % 50)", createdAtMillis: 1) { _ in body }
                    if sequence == nil { XCTFail("k\(next) was already stored") }
                    next += 1
                }
            }
        }
        while next < undelivered { try commit(min(1_000, undelivered - next)) }
        // Counted once (the first status of a connection counts the table), not measured.
        XCTAssertEqual(try store.status(nowMillis: 2).pending, undelivered)
        let before = store.statementSteps
        try commit(appends)
        let afterAppends = store.statementSteps
        XCTAssertThrowsError(try commit(1)) { error in
            guard case StoreError.outboxFull(undelivered + appends, undelivered + appends) = error else {
                return XCTFail("\(error)")
            }
        }
        return (afterAppends - before, store.statementSteps - afterAppends)
    }

    func testTheCapCheckCostsTheSameAtTenAndAHundredThousandUndeliveredEvents() throws {
        let small = try stepsOfAppendingUpToTheCap(undelivered: 10)
        try tearDownWithError()
        try setUpWithError()
        let large = try stepsOfAppendingUpToTheCap(undelivered: 100_000)
        XCTAssertGreaterThan(small.appends, 0)
        XCTAssertGreaterThan(small.refusal, 0)
        XCTAssertEqual(large.appends, small.appends)
        XCTAssertEqual(large.refusal, small.refusal)
    }

    func testAnotherProcessesDeliveriesAreCountedBeforeTheCapRefuses() throws {
        // The kept counts must not refuse on stale numbers: another connection made room.
        let store = try open(StoreConfiguration(maximumEvents: 3))
        for key in ["a", "b", "c"] { try append(store, key: key) }
        XCTAssertThrowsError(try append(store, key: "d"))
        let other = try open()
        try other.markSent(sequence: 1, status: 201, atMillis: 2)
        try other.markDead(sequence: 2, status: 400, error: "HTTP 400", atMillis: 2)
        XCTAssertEqual(try append(store, key: "d"), 4, "a sent event makes room, a dead letter does not")
        XCTAssertThrowsError(try append(store, key: "e"))
        XCTAssertEqual(try store.status(nowMillis: 3).pending, 2)
    }
}
