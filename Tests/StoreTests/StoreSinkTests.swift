import XCTest
@testable import Store

/// The outbox's sinks (docs/event-api.md, "Sinks"): each configured sink has its own
/// progress per event, its own retries and figures; retention and the cap follow them all.
final class StoreSinkTests: StoreTestCase {
    let day = RetentionPolicy.day

    func sequences(_ entries: [OutboxEntry]) -> [Int64] { entries.map(\.sequence) }

    func testEachSinkReadsAndRecordsItsOwnProgress() throws {
        let store = try open()
        XCTAssertEqual(try store.configureSinks(["server", "mqtt"], nowMillis: 0), SinkChanges(added: ["mqtt"]))
        for index in 1 ... 5 { try append(store, key: "k\(index)", person: "p\(index % 2)") }
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 0, limit: 2)), [1, 2])
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 2, limit: 10)), [3, 4, 5])
        let first = try XCTUnwrap(try store.pendingEvents(sink: "mqtt", after: 0, limit: 1).first)
        XCTAssertEqual([first.idempotencyKey, first.sink], ["k1", "mqtt"])
        XCTAssertEqual(first.body, Array("{\"sequence\": 1, \"key\": \"k1\"}".utf8))

        try store.record([.delivered(sequence: 1), .delivered(sequence: 2),
                          .retry(sequence: 3, atMillis: 9_000, errorClass: .network, error: "connection refused"),
                          .refused(sequence: 4, errorClass: .client, error: "payload too large")], sink: "mqtt", atMillis: 5_000)
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 0, limit: 10)), [3, 5])
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "server", after: 0, limit: 10)), [1, 2, 3, 4, 5],
                       "the server's progress is its own")
        let retried = try XCTUnwrap(try store.entry(sink: "mqtt", sequence: 3))
        XCTAssertEqual(retried.attempts, 1)
        XCTAssertEqual(retried.nextAttemptMillis, 9_000)
        XCTAssertEqual(retried.lastError, "connection refused")
        XCTAssertNil(retried.lastStatus, "no HTTP status for a sink that has none")

        let mqtt = try store.status(sink: "mqtt", nowMillis: 6_000)
        XCTAssertEqual([mqtt.pending, mqtt.sent, mqtt.rejected, mqtt.dead], [2, 2, 0, 1])
        XCTAssertEqual(mqtt.lastSuccessMillis, 5_000)
        XCTAssertEqual(mqtt.lastErrorMillis, 5_000)
        XCTAssertEqual(mqtt.lastErrorClass, .client)
        XCTAssertEqual(mqtt.lastError, "payload too large")
        XCTAssertEqual(mqtt.oldestPendingAgeMillis, 5_000)
        let server = try store.status(sink: "server", nowMillis: 6_000)
        XCTAssertEqual([server.pending, server.sent, server.dead], [5, 0, 0])
        XCTAssertNil(server.lastSuccessMillis)
        XCTAssertNil(server.lastErrorMillis)
        XCTAssertEqual(try store.sinkStatuses(nowMillis: 6_000).map(\.sink), ["mqtt", "server"])

        // An outcome for an event the sink no longer has pending changes nothing.
        try store.record([.delivered(sequence: 4)], sink: "mqtt", atMillis: 7_000)
        XCTAssertEqual(try store.status(sink: "mqtt", nowMillis: 7_000).dead, 1)
        // The dead letter put back is pending for that sink only.
        XCTAssertEqual(try store.retryDead(sink: "mqtt", nowMillis: 8_000), 1)
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 0, limit: 10)), [3, 4, 5])
        try assertCountsMatchAFreshCount(store)
    }

    /// Reading a sink's next events is one index range: the same work behind 20 pending
    /// events and 20,000 delivered by it as behind 200 and 200.
    func testReadingTheNextEventsCostsTheSameWhateverTheTableAndTheBacklog() throws {
        func steps(rows: Int) throws -> Int {
            let store = try Store(path: directory + "/rows-\(rows).sqlite")
            try store.configureSinks(["mqtt", "server"], nowMillis: 0)
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                for index in 0 ..< 2 * rows {
                    _ = try transaction.appendEvent(idempotencyKey: "k\(index)", type: "checkin", personId: "p\(index % 9)",
                                                    createdAtMillis: 0) { _ in [0x7B, 0x7D] }
                }
            }
            // The first half delivered to the broker; the server has everything pending.
            try store.record((1 ... rows).map { .delivered(sequence: Int64($0)) }, sink: "mqtt", atMillis: 1)
            let before = store.statementSteps
            XCTAssertEqual(try store.pendingEvents(sink: "mqtt", after: Int64(rows + 5), limit: 10).first?.sequence, Int64(rows + 6))
            XCTAssertEqual(try store.pendingEvents(sink: "server", after: Int64(rows + 5), limit: 10).count, 10)
            return store.statementSteps - before
        }
        let small = try steps(rows: 200)
        let large = try steps(rows: 20_000)
        XCTAssertGreaterThan(small, 0)
        XCTAssertEqual(large, small)
    }

    /// The broker is down for a day while the server takes every event: the server's
    /// progress is not held back, and nothing is pruned until both have every event.
    func testRetentionWaitsForEverySinkWhileOneIsDownForADay() throws {
        let store = try open()
        try store.configureSinks(["mqtt", "server"], nowMillis: 0)
        let policy = RetentionPolicy.forDoor(hasSinks: true)
        let hour: Int64 = 3_600_000
        var retryAt: Int64 = 0
        for hourOfDay in 0 ..< 24 {
            let now = Int64(hourOfDay) * hour
            let sequence = try XCTUnwrap(try append(store, key: "k\(hourOfDay)", person: "p\(hourOfDay % 3)", at: now))
            try store.record([.sent(sequence: sequence, status: 201)], sink: "server", atMillis: now + 100)
            // The broker's sink tries its oldest event and fails, with its own backoff.
            let head = try XCTUnwrap(try store.pendingEvents(sink: "mqtt", after: 0, limit: 1).first)
            XCTAssertEqual(head.sequence, 1, "the broker's sink starts again from its oldest")
            retryAt = now + 60_000
            try store.record([SinkOutcome.retry(sequence: head.sequence, atMillis: retryAt, errorClass: .network, error: "broker away")],
                             sink: "mqtt", atMillis: now + 200)
        }
        XCTAssertEqual(try store.status(sink: "server", nowMillis: 24 * hour).pending, 0)
        XCTAssertEqual(try store.status(sink: "mqtt", nowMillis: 24 * hour).pending, 24)
        XCTAssertEqual(try store.entry(sink: "mqtt", sequence: 1)?.attempts, 24)
        XCTAssertEqual(try store.status(nowMillis: 24 * hour).pending, 24, "the whole outbox: the sink furthest behind")
        // Long past the delivered rows' week: nothing goes while the broker lacks them.
        XCTAssertEqual(try store.pruneBatch(nowMillis: 30 * day, policy: policy).pruned.total, 0)

        // The broker is back on day 31 and takes the first 20.
        try store.record((1 ... 20).map { .delivered(sequence: Int64($0)) }, sink: "mqtt", atMillis: 31 * day)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 38 * day - 1, policy: policy).pruned.total, 0,
                       "kept a week after the last sink took them")
        XCTAssertEqual(try store.pruneBatch(nowMillis: 38 * day + 1, policy: policy).pruned, PrunedRows(sent: 20))
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 0, limit: 10)), [21, 22, 23, 24])
        XCTAssertEqual(try store.list(sink: "server", states: [.sent], limit: 100).map(\.sequence), [21, 22, 23, 24])
        try assertCountsMatchAFreshCount(store)
    }

    func testADeadLetterOfOneSinkIsKeptItsMonthOnceTheOthersHaveIt() throws {
        let store = try open()
        try store.configureSinks(["mqtt", "server"], nowMillis: 0)
        try append(store, key: "a", at: 0)
        try store.record([.dead(sequence: 1, status: 422, error: "HTTP 422")], sink: "server", atMillis: 0)
        let policy = RetentionPolicy.forDoor(hasSinks: true)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 60 * day, policy: policy).pruned.total, 0, "the broker lacks it")
        try store.record([.delivered(sequence: 1)], sink: "mqtt", atMillis: 60 * day)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 89 * day, policy: policy).pruned.total, 0)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 90 * day + 1, policy: policy).pruned, PrunedRows(dead: 1))
    }

    func testASinkAddedStartsFromTheEventsStillInTheOutboxAndARemovedOneHoldsNothing() throws {
        let store = try open()
        XCTAssertEqual(try store.configuredSinks(), ["server"], "a new outbox has the server, as version 1 had")
        for index in 1 ... 3 { try append(store, key: "k\(index)", at: 0) }
        try store.record([.sent(sequence: 1, status: 201), .sent(sequence: 2, status: 201)], atMillis: 0)
        let policy = RetentionPolicy.forDoor(hasSinks: true)

        XCTAssertEqual(try store.configureSinks(["mqtt", "server"], nowMillis: day), SinkChanges(added: ["mqtt"]))
        XCTAssertEqual(try store.configureSinks(["server", "mqtt"], nowMillis: day), SinkChanges(), "the same set changes nothing")
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 0, limit: 10)), [1, 2, 3],
                       "every event still in the outbox")
        XCTAssertEqual(try store.pruneBatch(nowMillis: 8 * day, policy: policy).pruned.total, 0, "the broker lacks them")
        try store.record([.delivered(sequence: 1)], sink: "mqtt", atMillis: day)
        XCTAssertEqual(try store.pruneBatch(nowMillis: 8 * day + 1, policy: policy).pruned, PrunedRows(sent: 1))

        XCTAssertEqual(try store.configureSinks(["server"], nowMillis: 9 * day), SinkChanges(removed: ["mqtt"]))
        XCTAssertEqual(try store.pruneBatch(nowMillis: 9 * day, policy: policy).pruned, PrunedRows(sent: 1),
                       "the server has 2; the broker, no longer configured, holds it no more")
        XCTAssertEqual(try store.status(nowMillis: 9 * day).pending, 1, "the server's backlog alone")
        XCTAssertEqual(try store.configureSinks(["mqtt", "server"], nowMillis: 10 * day), SinkChanges(added: ["mqtt"]))
        XCTAssertEqual(sequences(try store.pendingEvents(sink: "mqtt", after: 0, limit: 10)), [3], "it resumes where it was")
        XCTAssertEqual(try store.configureSinks([], nowMillis: 11 * day), SinkChanges(removed: ["mqtt"]),
                       "without any sink, events wait for the server")
        XCTAssertEqual(try store.configuredSinks(), ["server"])
        try assertCountsMatchAFreshCount(store)
    }

    func testTheCapCountsTheSinkFurthestBehind() throws {
        let store = try open(StoreConfiguration(maximumEvents: 3))
        try store.configureSinks(["mqtt", "server"], nowMillis: 0)
        for key in ["a", "b", "c"] { try append(store, key: key) }
        try store.record((1 ... 3).map { .sent(sequence: Int64($0), status: 201) }, sink: "server", atMillis: 1)
        XCTAssertThrowsError(try append(store, key: "d"), "the broker still lacks three") { error in
            guard case StoreError.outboxFull(3, 3) = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(try store.status(nowMillis: 1).isFull)
        try store.record([.delivered(sequence: 1)], sink: "mqtt", atMillis: 2)
        XCTAssertEqual(try append(store, key: "d"), 4)
        XCTAssertThrowsError(try append(store, key: "e"))
        try store.configureSinks(["server"], nowMillis: 3)
        XCTAssertEqual(try append(store, key: "e"), 5, "a sink removed holds the cap no more")
    }

    private func assertCountsMatchAFreshCount(_ store: Store, line: UInt = #line) throws {
        let fresh = try open()
        for sink in ["server", "mqtt"] {
            let kept = try store.status(sink: sink, nowMillis: 1)
            let counted = try fresh.status(sink: sink, nowMillis: 1)
            XCTAssertEqual([kept.pending, kept.sent, kept.rejected, kept.dead],
                           [counted.pending, counted.sent, counted.rejected, counted.dead], sink, line: line)
        }
        XCTAssertEqual(try store.currentStateCounts(), try fresh.currentStateCounts(), line: line)
    }
}
