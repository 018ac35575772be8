import EventLoop
import Store
import XCTest
@testable import Forwarder

/// The real forwarder on a real event loop against a loopback server: the integration of
/// libcurl's transfer layer (requests on the wire, answers and `Retry-After` read back,
/// connection failures classified). The forwarder's schedule itself is tested on virtual
/// time in ForwarderScheduleTests.
final class ForwarderLoopTests: ForwarderTestCase {
    func testRetriesUntilDeliveredWithPerPersonOrder() throws {
        let server = try LoopbackServer { index, _ in .init(status: index < 3 ? 503 : 201) }
        defer { server.stop() }
        let events = (0 ..< 6).map { (key: "k\($0)", person: $0 % 2 == 0 ? "a" : "b") }
        let store = try makeStore(events: events)
        let loop = EventLoop()
        var delivered: [Int64] = []
        let forwarder = try Forwarder(store: store, loop: loop,
                                      configuration: ForwarderConfiguration(url: server.url, deviceId: "d", appVersion: "t", maxBackoff: .seconds(1)),
                                      jitterSeed: 1) { event in
            if case let .delivered(sequence, _, _) = event { delivered.append(sequence) }
        }
        forwarder.start()
        run(loop) { forwarder.inFlightCount == 0 && (try? store.hasPending()) == false }
        XCTAssertEqual(delivered.sorted(), Array(1 ... 6))
        let requests = server.requests
        XCTAssertEqual(requests.count, 9)
        for person in ["a", "b"] {
            let sequences = requests.filter { $0.person == person }.map(\.sequence)
            XCTAssertEqual(sequences, sequences.sorted(), "person \(person) in sequence order")
        }
        let status = try forwarder.status()
        XCTAssertEqual(status.outbox.sent, 6)
        XCTAssertEqual(status.amber, .off)
        XCTAssertNotNil(status.lastSuccessMillis)
    }

    func testRetryAfterSetsTheNextAttempt() throws {
        let server = try LoopbackServer { _, _ in .init(status: 503, headers: ["Retry-After: 7"]) }
        defer { server.stop() }
        let store = try makeStore(events: [("k", "a")])
        let loop = EventLoop()
        let forwarder = try Forwarder(store: store, loop: loop,
                                      configuration: ForwarderConfiguration(url: server.url, deviceId: "d", appVersion: "t"),
                                      jitterSeed: 3)
        forwarder.start()
        run(loop) { server.requests.count >= 1 && forwarder.inFlightCount == 0 }
        let entry = try XCTUnwrap(try store.entry(sequence: 1))
        XCTAssertEqual(entry.nextAttemptMillis - entry.updatedAtMillis, 7_000)
        XCTAssertEqual(entry.lastError, "HTTP 503")
        XCTAssertEqual(try forwarder.status().amber, .blink)
    }

    func testUnreachableServerIsANetworkErrorAndRetriedSoon() throws {
        // A port nobody listens on: bind one, learn its number, close it.
        let server = try LoopbackServer { _, _ in .init(status: 201) }
        let url = server.url
        server.stop()
        let store = try makeStore(events: [("k", "a")])
        let loop = EventLoop()
        var failures: [DeliveryErrorClass] = []
        let forwarder = try Forwarder(store: store, loop: loop,
                                      configuration: ForwarderConfiguration(url: url, deviceId: "d", appVersion: "t"),
                                      jitterSeed: 4) { event in
            if case let .retrying(_, _, errorClass, _, _) = event { failures.append(errorClass) }
        }
        forwarder.start()
        run(loop) { failures.count >= 2 }
        XCTAssertEqual(failures.first, .network)
        XCTAssertEqual(try store.status(nowMillis: 0).lastErrorClass, .network)
    }
}
