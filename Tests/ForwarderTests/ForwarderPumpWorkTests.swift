import EventLoop
import Store
import XCTest
@testable import Forwarder

/// Choosing what to send next runs on every commit, answer and retry wake-up: its work
/// (SQLite steps, counted, not timed) must grow with what is sent, not with the backlog
/// waiting behind persons held in retry — on the virtual loop, against a scripted server.
final class ForwarderPumpWorkTests: ForwarderTestCase {
    /// Persons whose head is refused with a long `Retry-After`: their backlog stays.
    private let heldPersons = 8

    /// `backlog` pending events of the held persons, in front; then two events of two
    /// other persons are committed and the forwarder kicked: the steps from the kick until
    /// both are delivered and recorded.
    private func stepsOfDeliveringTwoBehind(backlog: Int) throws -> Int {
        let store = try Store(path: Store.path(stateDirectory: directory))
        var next = 0
        func commit(persons: [String]) throws {
            try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                for person in persons {
                    _ = try transaction.appendEvent(idempotencyKey: "k\(next)", type: "checkin", personId: person, createdAtMillis: 0) { sequence in
                        Array("{\"sequence\": \(sequence), \"person\": \"\(person)\"}".utf8)
                    }
                    next += 1
                }
            }
        }
        while next < backlog {
            try commit(persons: (next ..< min(next + 1_000, backlog)).map { "held\($0 % heldPersons)" })
        }
        let virtual = VirtualEventLoop()
        let server = ScriptedTransfers(loop: virtual.loop) { _, request in
            request.person.hasPrefix("held") ? .status(503, retryAfter: "3600") : .status(201)
        }
        let configuration = ForwarderConfiguration(url: "https://attendance.example.org", deviceId: "d", appVersion: "t",
                                                   maxBackoff: .seconds(7_200), maxInFlight: heldPersons)
        let forwarder = try Forwarder(store: store, loop: virtual.loop, configuration: configuration, transfers: server, jitterSeed: 1)
        forwarder.start()
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(server.sent.count, heldPersons, "each held person's head, once")

        try commit(persons: ["free-1", "free-2"])
        let before = store.statementSteps
        forwarder.kick()
        try virtual.advance(by: .milliseconds(100))
        let steps = store.statementSteps - before
        XCTAssertEqual(server.sent.dropFirst(heldPersons).map(\.request.person), ["free-1", "free-2"])
        XCTAssertEqual(try store.status(nowMillis: 0).sent, 2)
        XCTAssertEqual(try store.status(nowMillis: 0).pending, backlog)
        forwarder.stop()
        return steps
    }

    func testChoosingTheNextEventsCostsTheSameBehindTenAndAHundredThousandHeldEvents() throws {
        let small = try stepsOfDeliveringTwoBehind(backlog: 8)
        try tearDownWithError()
        try setUpWithError()
        let large = try stepsOfDeliveringTwoBehind(backlog: 99_998)
        XCTAssertGreaterThan(small, 0)
        XCTAssertEqual(large, small)
    }

    func testAHeldPersonsBacklogFollowsInOrderOnceTheirWaitEnds() throws {
        // The other side of the same queue: persons released from their wait are offered
        // again, oldest head first, and each person's events go in sequence order.
        let store = try makeStore(events: (0 ..< 12).map { (key: "k\($0)", person: "p\($0 % 3)") })
        let virtual = VirtualEventLoop()
        let server = ScriptedTransfers(loop: virtual.loop) { index, _ in index < 3 ? .status(503, retryAfter: "5") : .status(201) }
        let configuration = ForwarderConfiguration(url: "https://attendance.example.org", deviceId: "d", appVersion: "t", maxInFlight: 2)
        let forwarder = try Forwarder(store: store, loop: virtual.loop, configuration: configuration, transfers: server, jitterSeed: 1)
        forwarder.start()
        try virtual.advance(by: .seconds(4))
        XCTAssertEqual(server.sent.map(\.request.sequence), [1, 2, 3], "every head tried once, then held")
        try virtual.advance(by: .seconds(10))
        XCTAssertEqual(try store.hasPending(), false)
        for person in 0 ..< 3 {
            let sequences = server.sent.dropFirst(3).map(\.request).filter { $0.person == "p\(person)" }.map(\.sequence)
            XCTAssertEqual(sequences, Array(stride(from: person + 1, through: 12, by: 3)), "p\(person) in sequence order")
        }
        XCTAssertEqual(server.peakInFlight, 2)
    }
}
