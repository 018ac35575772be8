import EventLoop
import XCTest
@testable import Store

/// Retention (docs/event-api.md, "Retention"): what is pruned, in batches, and what a
/// batch costs whatever the table holds.
final class StoreRetentionTests: StoreTestCase {
    let day = RetentionPolicy.day

    func testEachKindGoesAfterItsOwnAgeAndUndeliveredRowsStayWhileAServerTakesThem() throws {
        let store = try open()
        for (index, key) in ["sent", "rejected", "dead", "pending"].enumerated() {
            try append(store, key: key, person: "p\(index)", at: 0)
        }
        try store.record([.sent(sequence: 1, status: 201), .rejected(sequence: 2, status: 409),
                          .dead(sequence: 3, status: 400, error: "HTTP 400")], atMillis: 0)
        let withServer = RetentionPolicy.forDoor(hasSinks: true)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 7 * day - 1, policy: withServer).pruned.total, 0)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 7 * day + 1, policy: withServer).pruned,
                       PrunedRows(sent: 1, rejected: 1))
        XCTAssertEqual(try store.pruneBatch(nowMillis: 30 * day + 1, policy: withServer).pruned, PrunedRows(dead: 1))
        XCTAssertEqual(try store.pruneBatch(nowMillis: 3650 * day, policy: withServer).pruned.total, 0,
                       "an undelivered event waits for its server however long")
        XCTAssertEqual(try store.list(states: Set(OutboxState.allCases), limit: 10).map(\.idempotencyKey), ["pending"])
        let totals = try store.retentionTotals()
        XCTAssertEqual(totals.pruned, PrunedRows(sent: 1, rejected: 1, dead: 1))
        XCTAssertEqual(totals.lastPruneMillis, 30 * day + 1)
    }

    func testADoorWithoutAServerKeepsWhatItDecidedForNinetyDays() throws {
        let store = try open()
        try append(store, key: "old", person: "a", at: 0)
        try append(store, key: "new", person: "a", at: 10 * day)
        let alone = RetentionPolicy.forDoor(hasSinks: false)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 90 * day - 1, policy: alone).pruned.total, 0)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 90 * day + 1, policy: alone).pruned, PrunedRows(unsent: 1))
        XCTAssertEqual(try store.status(nowMillis: 90 * day + 1).pending, 1)
        XCTAssertEqual(try store.list(states: [.pending], limit: 10).map(\.idempotencyKey), ["new"])
    }

    func testDeliveredRowsBeyondTheirCountGoOldestFirst() throws {
        let store = try open()
        for index in 1 ... 10 { try append(store, key: "k\(index)", person: "p\(index)", at: 0) }
        try store.record((1 ... 10).map { .sent(sequence: Int64($0), status: 201) }, atMillis: 0)
        let policy = RetentionPolicy(maximumDelivered: 4)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 1, policy: policy).pruned, PrunedRows(sent: 6))
        XCTAssertEqual(try store.list(states: [.sent], limit: 10).map(\.sequence), [7, 8, 9, 10])
        XCTAssertEqual(try store.status(nowMillis: 1).sent, 4)
    }

    func testABatchDeletesAtMostItsSizeAndSaysMoreFollow() throws {
        let store = try open()
        for index in 1 ... 25 { try append(store, key: "k\(index)", person: "p\(index)", at: 0) }
        try store.record((1 ... 25).map { .sent(sequence: Int64($0), status: 201) }, atMillis: 0)
        let policy = RetentionPolicy(batch: 10)
        var batches: [Int] = []
        while true {
            let (pruned, more) = try store.pruneBatch(nowMillis: 8 * day, policy: policy)
            batches.append(pruned.total)
            if !more { break }
        }
        XCTAssertEqual(batches, [10, 10, 5])
        XCTAssertEqual(try store.status(nowMillis: 8 * day).sent, 0)
    }

    /// A batch looks at no more rows than it may delete: the same steps with 200 delivered
    /// rows kept as with 20,000 (cost follows the work, not the table).
    func testABatchCostsTheSameWhateverTheTableHolds() throws {
        func steps(keeping kept: Int) throws -> Int {
            // Files in the test's directory, removed by its tear-down.
            let store = try Store(path: directory + "/kept-\(kept).sqlite")
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                for index in 0 ..< kept + 50 {
                    _ = try transaction.appendEvent(idempotencyKey: "k\(index)", type: "checkin", personId: "p",
                                                    createdAtMillis: 0) { _ in [0x7B, 0x7D] }
                }
            }
            // 50 old enough, the rest delivered a day ago.
            try store.record((1 ... 50).map { .sent(sequence: Int64($0), status: 201) }, atMillis: 0)
            try store.record((51 ... kept + 50).map { .sent(sequence: Int64($0), status: 201) }, atMillis: 7 * day)
            _ = try store.status(nowMillis: 0)
            let before = store.statementSteps
            XCTAssertEqual(try store.pruneBatch(nowMillis: 8 * day - 1, policy: RetentionPolicy(batch: 100)).pruned.sent, 50)
            return store.statementSteps - before
        }
        let small = try steps(keeping: 200)
        let large = try steps(keeping: 20_000)
        XCTAssertLessThanOrEqual(large, small + small / 10, "\(small) steps at 200 rows kept, \(large) at 20,000")
    }

    func testTheScheduleRunsBatchesBackToBackThenHourly() {
        var schedule = RetentionSchedule(startedAt: .zero)
        XCTAssertEqual(schedule.next, .zero + RetentionSchedule.firstPassAfter)
        let now = schedule.next
        XCTAssertEqual(schedule.batchFinished(pruned: PrunedRows(sent: 500), more: true, at: now), .continuing)
        XCTAssertEqual(schedule.next, now + RetentionSchedule.pauseBetweenBatches)
        XCTAssertEqual(schedule.batchFinished(pruned: PrunedRows(dead: 3), more: false, at: schedule.next),
                       .finished(PrunedRows(sent: 500, dead: 3)))
        let later = schedule.next
        XCTAssertEqual(later, now + RetentionSchedule.pauseBetweenBatches + RetentionSchedule.interval)
        XCTAssertEqual(schedule.batchFinished(pruned: nil, more: false, at: later), .failed)
        XCTAssertEqual(schedule.next, later + RetentionSchedule.interval)
    }
}
