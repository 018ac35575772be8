import EventLoop
import XCTest
@testable import Forwarder

/// The heartbeat's sending rules on virtual time against a scripted server: one in flight
/// at a time (a due one is skipped, not queued), outcomes by status, and its own transfers
/// beside the events'.
final class HeartbeatSenderTests: ForwarderTestCase {
    private let configuration = ForwarderConfiguration(url: "https://attendance.example.org", deviceId: "door-1", appVersion: "t")

    func testOneInFlightAtATimeAndOutcomesByStatus() throws {
        let virtual = VirtualEventLoop()
        let answers: [AttemptResult] = [.status(204), .status(503), .failure(TransportFailure(kind: .timeout, message: "timed out"))]
        let server = ScriptedTransfers(loop: virtual.loop, latency: .seconds(5)) { index, _ in answers[index] }
        var outcomes: [HeartbeatSender.Outcome] = []
        let sender = try HeartbeatSender(loop: virtual.loop, configuration: configuration, transfers: server) { outcomes.append($0) }
        sender.send(body: "{}")
        try virtual.advance(by: .seconds(4))
        sender.send(body: "{}")
        XCTAssertEqual(outcomes, [.skipped], "the last one is still in flight")
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(outcomes, [.skipped, .sent(status: 204)])
        sender.send(body: "{}")
        try virtual.advance(by: .seconds(5))
        sender.send(body: "{}")
        try virtual.advance(by: .seconds(5))
        XCTAssertEqual(outcomes, [.skipped, .sent(status: 204), .failed("HTTP 503"), .failed("timed out")])
        XCTAssertEqual(server.sent.count, 3, "a skipped heartbeat is not sent later")
    }

    /// A heartbeat due at the same moment as events, to a server that takes a minute to
    /// answer it, holds none of them back: the events go out at once on their own transfers.
    func testASlowHeartbeatNeverHoldsAnEventBack() throws {
        let virtual = VirtualEventLoop()
        let heartbeats = ScriptedTransfers(loop: virtual.loop, latency: .seconds(60)) { _, _ in .status(204) }
        let events = ScriptedTransfers(loop: virtual.loop, latency: .milliseconds(40)) { _, _ in .status(201) }
        let sender = try HeartbeatSender(loop: virtual.loop, configuration: configuration, transfers: heartbeats) { _ in }
        let store = try makeStore(events: [("k1", "a"), ("k2", "b")])
        let forwarder = try Forwarder(store: store, loop: virtual.loop, configuration: configuration, transfers: events, jitterSeed: 1)
        sender.send(body: "{}")
        forwarder.start()
        try virtual.advance(by: .milliseconds(40))
        XCTAssertEqual(try store.hasPending(), false)
        XCTAssertEqual(heartbeats.inFlightCount, 1)
    }
}
