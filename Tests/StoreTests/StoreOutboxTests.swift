import XCTest
@testable import Store

final class StoreOutboxTests: StoreTestCase {
    private func pendingEvents(_ store: Store, after sequence: Int64 = 0) throws -> [String] {
        var events: [String] = []
        try store.forEachPendingEvent(after: sequence) { sequence, person in events.append("\(sequence)\(person)") }
        return events
    }

    func testPendingEventsInSequenceOrderAndEachPersonsHead() throws {
        let store = try open()
        try append(store, key: "a1", person: "a")
        try append(store, key: "b1", person: "b")
        try append(store, key: "a2", person: "a")
        try append(store, key: "c1", person: "c")
        XCTAssertEqual(try pendingEvents(store), ["1a", "2b", "3a", "4c"])
        XCTAssertEqual(try pendingEvents(store, after: 2), ["3a", "4c"])
        XCTAssertEqual(try pendingEvents(store, after: 4), [])
        XCTAssertEqual(try ["a", "b", "c", "z"].map { try store.pendingHead(personId: $0) }, [1, 2, 4, nil])
        try store.markSent(sequence: 2, status: 201, atMillis: 2_000)
        XCTAssertEqual(try pendingEvents(store), ["1a", "3a", "4c"])
        XCTAssertNil(try store.pendingHead(personId: "b"))
    }

    func testARetryKeepsThePersonsHeadUntilItIsSent() throws {
        let store = try open()
        try append(store, key: "a1", person: "a", at: 1_000)
        try append(store, key: "a2", person: "a", at: 1_000)
        try append(store, key: "b1", person: "b", at: 1_000)
        try store.scheduleRetry(sequence: 1, atMillis: 9_000, errorClass: .server, error: "HTTP 503", nowMillis: 1_100)
        XCTAssertEqual(try store.pendingHead(personId: "a"), 1)
        let head = try XCTUnwrap(try store.entry(sequence: 1))
        XCTAssertEqual(head.attempts, 1)
        XCTAssertEqual(head.lastError, "HTTP 503")
        XCTAssertEqual(head.nextAttemptMillis, 9_000, "kept for `outbox list`")
        // Once the head is sent, the person's next event follows.
        try store.markSent(sequence: 1, status: 201, atMillis: 9_100)
        XCTAssertEqual(try store.pendingHead(personId: "a"), 2)
    }

    func testRejectedAndDeadLetPersonsNextEventGo() throws {
        let store = try open()
        try append(store, key: "a1", person: "a")
        try append(store, key: "a2", person: "a")
        try append(store, key: "a3", person: "a")
        try store.markRejected(sequence: 1, status: 409, atMillis: 1_500)
        XCTAssertEqual(try store.pendingHead(personId: "a"), 2)
        try store.markDead(sequence: 2, status: 400, error: "HTTP 400: bad", atMillis: 1_600)
        XCTAssertEqual(try store.pendingHead(personId: "a"), 3)
        XCTAssertEqual(try store.list(states: [.dead], limit: 10).map(\.idempotencyKey), ["a2"])
        XCTAssertEqual(try store.list(states: [.rejected], limit: 10).first?.lastStatus, 409)
        // A dead letter put back is the person's head again.
        XCTAssertEqual(try store.retryDead(nowMillis: 1_700), 1)
        XCTAssertEqual(try store.pendingHead(personId: "a"), 2)
    }

    func testOutcomesOnlyMovePendingEvents() throws {
        let store = try open()
        try append(store, key: "a1")
        try store.markSent(sequence: 1, status: 201, atMillis: 2)
        // A late retry for an event already sent (by another process) changes nothing.
        try store.scheduleRetry(sequence: 1, atMillis: 99, errorClass: .network, error: "reset", nowMillis: 3)
        let entry = try XCTUnwrap(try store.entry(sequence: 1))
        XCTAssertEqual(entry.state, .sent)
        XCTAssertEqual(entry.attempts, 1)
    }

    func testRetryDeadPutsDeadLettersBack() throws {
        let store = try open()
        try append(store, key: "a1", person: "a")
        try append(store, key: "b1", person: "b")
        try store.markDead(sequence: 1, status: 400, error: "HTTP 400", atMillis: 1_100)
        try store.markSent(sequence: 2, status: 201, atMillis: 1_100)
        XCTAssertEqual(try store.retryDead(nowMillis: 3_000), 1)
        let entry = try XCTUnwrap(try store.entry(sequence: 1))
        XCTAssertEqual(entry.state, .pending)
        XCTAssertEqual(entry.attempts, 0)
        XCTAssertEqual(entry.nextAttemptMillis, 3_000)
        XCTAssertEqual(try store.retryDead(nowMillis: 3_000), 0)
    }

    func testStatus() throws {
        let store = try open()
        try append(store, key: "a1", person: "a", at: 1_000)
        try append(store, key: "b1", person: "b", at: 2_000)
        try append(store, key: "c1", person: "c", at: 3_000)
        try append(store, key: "d1", person: "d", at: 4_000)
        var status = try store.status(nowMillis: 10_000)
        XCTAssertEqual(status.pending, 4)
        XCTAssertEqual(status.oldestPendingAgeMillis, 9_000)
        XCTAssertNil(status.lastSuccessMillis)
        XCTAssertFalse(status.isFailing)

        try store.record([.sent(sequence: 1, status: 201), .dead(sequence: 2, status: 422, error: "HTTP 422")], atMillis: 11_000)
        try store.record([.retry(sequence: 3, atMillis: 20_000, errorClass: .auth, error: "HTTP 401")], atMillis: 12_000)
        status = try store.status(nowMillis: 13_000)
        XCTAssertEqual([status.pending, status.sent, status.rejected, status.dead], [2, 1, 0, 1])
        XCTAssertEqual(status.backlog, 2)
        XCTAssertEqual(status.oldestPendingAgeMillis, 10_000)
        XCTAssertEqual(status.lastSuccessMillis, 11_000)
        XCTAssertEqual(status.lastErrorMillis, 12_000)
        XCTAssertEqual(status.lastErrorClass, .auth)
        XCTAssertEqual(status.lastError, "HTTP 401")
        XCTAssertTrue(status.isFailing)
        XCTAssertEqual(status.lastSequence, 4)
    }

    func testExportStreamsChosenStates() throws {
        let store = try open()
        for index in 1 ... 5 { try append(store, key: "k\(index)", person: "p\(index)") }
        try store.markSent(sequence: 2, status: 201, atMillis: 2)
        try store.markSent(sequence: 4, status: 200, atMillis: 2)
        var exported: [Int64] = []
        try store.export(states: [.sent]) { exported.append($0.sequence) }
        XCTAssertEqual(exported, [2, 4])
        exported = []
        try store.export(states: [.pending, .sent]) { exported.append($0.sequence) }
        XCTAssertEqual(exported, [1, 2, 3, 4, 5])
    }

    func testAnotherConnectionsCommitIsNoticed() throws {
        let store = try open()
        XCTAssertFalse(try store.hasExternalChanges())
        let other = try open()
        try append(other, key: "elsewhere")
        XCTAssertTrue(try store.hasExternalChanges())
        XCTAssertFalse(try store.hasExternalChanges())
        // Its own commits are not "external".
        try append(store, key: "here")
        XCTAssertFalse(try store.hasExternalChanges())
    }

    func testHundredThousandEventsFit() throws {
        let store = try open()
        let body = [UInt8](repeating: 0x61, count: 600)
        let total = 100_000
        // Committed in batches to keep the test quick; the cap and the sequence are the
        // same code path as one event per commit.
        for batch in 0 ..< total / 1_000 {
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                for index in 0 ..< 1_000 {
                    let number = batch * 1_000 + index
                    _ = try transaction.appendEvent(idempotencyKey: "k\(number)", type: "checkin", personId: "p\(number % 50)", createdAtMillis: 1) { _ in body }
                }
            }
        }
        let status = try store.status(nowMillis: 2)
        XCTAssertEqual(status.pending, total)
        XCTAssertEqual(status.lastSequence, Int64(total))
        XCTAssertEqual(try pendingEvents(store, after: Int64(total - 50)).count, 50)
        XCTAssertEqual(try store.pendingHead(personId: "p49"), 50)
    }
}

final class StoreRepairTests: StoreTestCase {
    func testRetryPendingNowMakesBackedOffEventsDue() throws {
        let store = try open()
        try append(store, key: "a1", person: "a")
        try append(store, key: "b1", person: "b")
        try store.scheduleRetry(sequence: 1, atMillis: 300_000, errorClass: .auth, error: "HTTP 401", nowMillis: 1_000)
        XCTAssertEqual(try store.entry(sequence: 1)?.nextAttemptMillis, 300_000)
        XCTAssertEqual(try store.retryPendingNow(nowMillis: 2_000), 1)
        XCTAssertEqual(try store.entry(sequence: 1)?.nextAttemptMillis, 2_000)
    }

    func testStatusSaysFullAtTheCap() throws {
        let store = try open(StoreConfiguration(maximumEvents: 2))
        try append(store, key: "a")
        XCTAssertFalse(try store.status(nowMillis: 0).isFull)
        try append(store, key: "b")
        XCTAssertTrue(try store.status(nowMillis: 0).isFull)
    }

    func testPruneKeepsUndeliveredRows() throws {
        let store = try open(StoreConfiguration(deliveredRetentionMillis: 1_000))
        try append(store, key: "sent", person: "a")
        try append(store, key: "dead", person: "b")
        try append(store, key: "pending", person: "c")
        try append(store, key: "rejected", person: "d")
        try store.record([.sent(sequence: 1, status: 201), .dead(sequence: 2, status: 400, error: "x"),
                          .rejected(sequence: 4, status: 409)], atMillis: 2_000)
        XCTAssertEqual(try store.pruneDelivered(nowMillis: 2_500), 0, "within the retention")
        XCTAssertEqual(try store.pruneDelivered(nowMillis: 10_000), 2)
        XCTAssertEqual(try store.list(states: Set(OutboxState.allCases), limit: 10).map(\.idempotencyKey), ["dead", "pending"])
    }
}
