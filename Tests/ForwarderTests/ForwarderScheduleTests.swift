import EventLoop
import Store
import XCTest
@testable import Forwarder
@testable import Store

/// The forwarder's decisions on a virtual loop against a scripted server: when it retries,
/// how long it waits, what it gives up on, how much it sends at once. Minutes of backoff
/// take microseconds, and nothing sleeps. (The real transfer layer against a loopback
/// server: ForwarderLoopTests.)
final class ForwarderScheduleTests: ForwarderTestCase {
    private let latency: Duration = .milliseconds(40)

    private func makeForwarder(_ virtual: VirtualEventLoop, store: Store, maxBackoff: Duration = .seconds(300), maxInFlight: Int = 8,
                               answer: @escaping (Int, LoopbackServer.Request) -> AttemptResult,
                               onEvent: @escaping (ForwarderEvent) -> Void = { _ in }) throws -> (Forwarder, ScriptedTransfers) {
        let server = ScriptedTransfers(loop: virtual.loop, latency: latency, answer: answer)
        let configuration = ForwarderConfiguration(url: "https://attendance.example.org", deviceId: "d", appVersion: "t",
                                                   maxBackoff: maxBackoff, maxInFlight: maxInFlight)
        let forwarder = try Forwarder(store: store, loop: virtual.loop, configuration: configuration, transfers: server,
                                      jitterSeed: 1, onEvent: onEvent)
        return (forwarder, server)
    }

    /// The waits between attempts: each gap less the answer's latency.
    private func waits(_ server: ScriptedTransfers) -> [Duration] {
        zip(server.sent, server.sent.dropFirst()).map { $1.at - $0.at - latency }
    }

    // MARK: Backoff

    func testRetriesFollowTheBackoffScheduleThenDeliver() throws {
        let store = try makeStore(events: [("k", "a")])
        let virtual = VirtualEventLoop()
        let (forwarder, server) = try makeForwarder(virtual, store: store) { index, _ in .status(index < 5 ? 503 : 201) }
        forwarder.start()
        try virtual.advance(by: .seconds(60))
        XCTAssertEqual(server.sent.count, 6)
        XCTAssertEqual(try store.hasPending(), false)
        // About 0.1, 0.5, 2, 5 and 10 s, each within the ±20 % jitter.
        let nominal: [Duration] = [.milliseconds(100), .milliseconds(500), .seconds(2), .seconds(5), .seconds(10)]
        let gaps = waits(server)
        XCTAssertEqual(gaps.count, nominal.count)
        for (gap, nominal) in zip(gaps, nominal) {
            XCTAssertGreaterThanOrEqual(gap, nominal * 0.8, "\(gaps)")
            XCTAssertLessThanOrEqual(gap, nominal * 1.2, "\(gaps)")
        }
        XCTAssertEqual(try forwarder.status().amber, .off)
    }

    func testBackoffStopsGrowingAtTheMaximum() throws {
        let store = try makeStore(events: [("k", "a")])
        let virtual = VirtualEventLoop()
        let (forwarder, server) = try makeForwarder(virtual, store: store, maxBackoff: .seconds(8)) { _, _ in .status(500) }
        forwarder.start()
        try virtual.advance(by: .seconds(120))
        let gaps = waits(server)
        XCTAssertGreaterThan(gaps.count, 8)
        XCTAssertLessThanOrEqual(try XCTUnwrap(gaps.max()), .seconds(8), "capped at max_backoff_s: \(gaps)")
        XCTAssertTrue(gaps.suffix(4).allSatisfy { $0 >= .milliseconds(6_400) }, "the doubling reached the cap: \(gaps)")
    }

    func testRetryAfterIsAFloorHonouredToTheMillisecond() throws {
        let store = try makeStore(events: [("k", "a")])
        let virtual = VirtualEventLoop()
        let (forwarder, server) = try makeForwarder(virtual, store: store) { index, _ in
            index == 0 ? .status(503, retryAfter: "7") : .status(201)
        }
        forwarder.start()
        let firstAnswered = virtual.now + latency
        try virtual.advance(to: firstAnswered + .milliseconds(6_999))
        XCTAssertEqual(server.sent.count, 1, "not before the server's Retry-After")
        try virtual.advance(by: .milliseconds(1))
        XCTAssertEqual(server.sent.count, 2)
        let entry = try XCTUnwrap(try store.entry(sequence: 1))
        XCTAssertEqual(entry.state, .pending, "in flight")
        try virtual.advance(by: latency)
        XCTAssertEqual(try store.entry(sequence: 1)?.state, .sent)
    }

    func testRetryAfterZeroDoesNotTurnRetriesIntoATightLoop() throws {
        let store = try makeStore(events: [("k", "a")])
        let virtual = VirtualEventLoop()
        let (forwarder, server) = try makeForwarder(virtual, store: store) { _, _ in .status(429, retryAfter: "0") }
        forwarder.start()
        try virtual.advance(by: .seconds(10))
        // The schedule's 0.1, 0.5, 2 and 5 s (±20 %) still apply: five attempts in ten
        // seconds, not one per answer.
        XCTAssertEqual(server.sent.count, 5, "\(waits(server))")
        XCTAssertTrue(waits(server).allSatisfy { $0 >= .milliseconds(80) })
    }

    // MARK: What is given up on

    func testRejectedAndDeadLettersAreNeverRetriedAndRefusedCredentialsWaitLong() throws {
        let store = try makeStore(events: [("rejected", "a"), ("dead", "b"), ("auth", "c")])
        let virtual = VirtualEventLoop()
        var deadLetters: [Int64] = []
        let (forwarder, server) = try makeForwarder(virtual, store: store, maxBackoff: .seconds(60)) { _, request in
            switch request.key {
            case "rejected": .status(409)
            case "dead": .status(400)
            default: .status(401)
            }
        } onEvent: { event in
            if case let .deadLetter(sequence, _, _) = event { deadLetters.append(sequence) }
        }
        forwarder.start()
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(try store.entry(sequence: 1)?.state, .rejected)
        XCTAssertEqual(try store.entry(sequence: 2)?.state, .dead)
        XCTAssertEqual(deadLetters, [2])
        XCTAssertEqual(try store.entry(sequence: 3)?.state, .pending)
        let status = try forwarder.status()
        XCTAssertTrue(status.authRefused)
        XCTAssertEqual(status.amber, .steady)
        // The long backoff: about max_backoff (jitter only downwards, at most 20 %).
        try virtual.advance(to: .zero + latency + .seconds(48) - .milliseconds(1))
        XCTAssertEqual(server.sent.count, 3, "the refused token is not retried early")
        try virtual.advance(to: .zero + latency + .seconds(60))
        XCTAssertEqual(server.sent.map(\.request.key), ["rejected", "dead", "auth", "auth"])
        try virtual.advance(by: .seconds(600))
        XCTAssertEqual(server.sent.filter { $0.request.key != "auth" }.count, 2, "409 and 400 are never sent again")
        XCTAssertEqual(deadLetters, [2])
    }

    // MARK: The in-flight cap

    func testNoMoreThanMaxInFlightAndNeverTwoOfOnePerson() throws {
        let events = (0 ..< 12).map { (key: "k\($0)", person: "p\($0 % 6)") }
        let store = try makeStore(events: events)
        let virtual = VirtualEventLoop()
        let (forwarder, server) = try makeForwarder(virtual, store: store, maxInFlight: 2) { _, _ in .status(201) }
        server.latency = .seconds(1)
        forwarder.start()
        try virtual.runReady()
        XCTAssertEqual(server.inFlightCount, 2)
        XCTAssertEqual(forwarder.inFlightCount, 2)
        try virtual.advance(by: .seconds(6))
        XCTAssertEqual(server.peakInFlight, 2)
        XCTAssertEqual(server.sent.count, 12)
        XCTAssertEqual(try store.hasPending(), false)
        for person in 0 ..< 6 {
            let sequences = server.sent.map(\.request).filter { $0.person == "p\(person)" }.map(\.sequence)
            XCTAssertEqual(sequences, sequences.sorted(), "person p\(person) in sequence order")
        }
        // Each answer frees its slot at once: two a second, six seconds for twelve.
        XCTAssertEqual(server.sent.last?.at, .zero + .seconds(5))
    }

    // MARK: Monotonic retries

    func testAWallClockSteppedBackDoesNotDelayRetries() throws {
        let store = try makeStore(events: [("k", "a")])
        let virtual = VirtualEventLoop()
        let (forwarder, server) = try makeForwarder(virtual, store: store) { index, _ in .status(index == 0 ? 503 : 201) } onEvent: { event in
            // Right after the first failure is scheduled, NTP steps the clock back an hour.
            if case .retrying = event { virtual.clock.wallOriginMilliseconds -= 3_600_000 }
        }
        forwarder.start()
        // Waiting on the wall clock, the retry would wait an hour.
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(server.sent.count, 2)
        XCTAssertEqual(try store.hasPending(), false)
        XCTAssertLessThanOrEqual(waits(server)[0], .milliseconds(120), "the first step of the schedule")
    }

    // MARK: A store that cannot record

    func testAStoreThatCannotRecordBacksOffFromOneToThirtySecondsAndSaysSoOnce() throws {
        // No busy wait inside SQLite: a locked store fails at once, in virtual time.
        let store = try makeStore(events: [("k", "a")], configuration: StoreConfiguration(busyTimeoutMillis: 0))
        let other = try SQLiteConnection(path: store.path, busyTimeoutMillis: 0)
        let virtual = VirtualEventLoop()
        var failures = 0
        var recoveries = 0
        let (forwarder, server) = try makeForwarder(virtual, store: store) { _, _ in .status(201) } onEvent: { event in
            switch event {
            case .storeFailed: failures += 1
            case .storeRecovered: recoveries += 1
            default: break
            }
        }
        forwarder.start()
        // Once the first event is on its way, another process takes the write lock: every
        // outcome fails to be recorded.
        XCTAssertEqual(server.sent.count, 1)
        try other.execute("BEGIN IMMEDIATE")
        try virtual.advance(by: .seconds(120))
        // Each unrecorded answer pauses store work, twice as long as the last time, up to 30 s,
        // instead of sending the same event again at once.
        let pauses: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)]
        XCTAssertEqual(Array(waits(server).prefix(pauses.count)), pauses)
        XCTAssertEqual(failures, 1, "one line when the outage starts")
        XCTAssertEqual(recoveries, 0)
        let sentWhileLocked = server.sent.count
        try other.execute("COMMIT")
        try virtual.advance(by: .seconds(31))
        XCTAssertEqual(try store.hasPending(), false)
        XCTAssertEqual(server.sent.count, sentWhileLocked + 1, "sent once more after the outage (same key), then recorded")
        XCTAssertEqual(Set(server.sent.map(\.request.key)), ["k"])
        XCTAssertEqual(failures, 1)
        XCTAssertEqual(recoveries, 1, "one line when it ends")
    }
}
