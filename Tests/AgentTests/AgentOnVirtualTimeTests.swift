#if canImport(Glibc)
import Glibc
#endif
import Config
import ControllerFixtures
import EventLoop
import HCI
import Store
import XCTest
@testable import Agent

/// The assembled agent (`run` as the service runs it: controller link, door core, store,
/// fleet endpoints) on virtual time, its controller a transport in memory: an hour's visit
/// at the door and the silence after it take milliseconds, and what reaches the store is
/// checked against the presence settings.
final class AgentOnVirtualTimeTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = FileManagerless.temporaryDirectory()
        // The status socket in a directory of this test's, not the system's.
        setenv("RUNTIME_DIRECTORY", directory, 1)
    }

    override func tearDown() {
        unsetenv("RUNTIME_DIRECTORY")
    }

    /// An LE Advertising Report (legacy, ADV_NONCONN_IND) from the public address
    /// C0:00:00:00:00:01 at -60 dBm.
    private let tagReport = HCIPacket(type: .event, payload: [0x3E, 12, 0x02, 1, 0x03, 0x00, 0x01, 0, 0, 0, 0, 0xC0, 0x00, 0xC4])

    private func configuration() throws -> GatewayConfiguration {
        let path = directory + "/gateway.toml"
        let text = """
        [gateway]
        id = "door-virtual"
        site = "S_TEST"
        door = "test"
        state_dir = "\(directory)/state"

        [bluetooth]
        transport = "tcp:127.0.0.1:1"

        [[person]]
        id = "u_1"
        [[person.tag]]
        id = "tag-1"
        address = "C0:00:00:00:00:01"
        """
        try FileManagerless.write(path, text, mode: 0o600)
        return try GatewayConfiguration.load(path: path)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    func testAnHourAtTheDoorAndTheSilenceAfterItReachTheStoreAtTheirTimes() throws {
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let transport = AnsweringTransport()
        let configuration = try configuration()
        let agent = GatewayAgent(options: .init(configurationPath: directory + "/gateway.toml", configuration: configuration,
                                                appVersion: "test", transport: transport), loop: loop)
        let start = loop.now
        let arrives = start + .seconds(60)
        let leaves = arrives + .seconds(3600)
        // One report a second while the person is at the door, then silence; the agent is
        // stopped long after the checkout is due.
        var next = arrives
        func advertise() {
            guard next < leaves else { return }
            transport.inject(tagReport)
            next = next + .seconds(1)
            _ = loop.schedule(at: next) { advertise() }
        }
        _ = loop.schedule(at: arrives) { advertise() }
        let presence = configuration.presence
        // The last report went out a second before `leaves`.
        let checkoutDue = leaves - .seconds(1) + presence.lostAfter + presence.leaveAfter
        _ = loop.schedule(at: checkoutDue + .seconds(600)) { agent.shutdown(signal: "the test") }

        XCTAssertEqual(agent.run(), .stopped)
        XCTAssertGreaterThanOrEqual(loop.now, checkoutDue + .seconds(600), "stopped by the test, not before")

        let store = try Store(path: Store.path(stateDirectory: configuration.gateway.stateDirectory))
        let events = try store.list(states: [.pending], limit: 10)
        XCTAssertEqual(events.map(\.type), ["checkin", "checkout"])
        XCTAssertEqual(events.map(\.personId), ["u_1", "u_1"])
        let wallAtStart = loop.wallMilliseconds - Self.milliseconds(loop.now - start)
        func secondsAfterStart(_ entry: OutboxEntry) -> Double { Double(entry.createdAtMillis - wallAtStart) / 1000 }
        let checkin = try XCTUnwrap(events.first.map(secondsAfterStart))
        let checkout = try XCTUnwrap(events.last.map(secondsAfterStart))
        // Committed once the window holds enough samples (a few seconds), and once the
        // person has been silent for lost_after_s and then leave_after_s (docs/presence.md);
        // each within the read pause (at most a second) of its decision.
        XCTAssertGreaterThanOrEqual(checkin, 60)
        XCTAssertLessThanOrEqual(checkin, 60 + Double(Self.milliseconds(presence.window)) / 1000 + 1, "checkin \(checkin) s after start")
        let due = Double(Self.milliseconds(checkoutDue - start)) / 1000
        XCTAssertGreaterThanOrEqual(checkout, due, "not before the silence has lasted")
        XCTAssertLessThanOrEqual(checkout, due + 1, "checkout \(checkout) s after start, due at \(due)")
        XCTAssertEqual(agent.core.counters.checkins, 1)
        XCTAssertEqual(agent.core.counters.checkouts, 1)
    }

    /// An LE Advertising Report from the public address C0:00:00:00:00:0`n` at -60 dBm.
    private func report(from n: UInt8) -> HCIPacket {
        HCIPacket(type: .event, payload: [0x3E, 12, 0x02, 1, 0x03, 0x00, n, 0, 0, 0, 0, 0xC0, 0x00, 0xC4])
    }

    /// A day at the door through the real drivers: two persons come and go, one of them
    /// twice; every visit reaches the store as a checkin and a checkout at its times, in
    /// order, and the metrics textfile (the fleet's driver, on the loop's timers) counts
    /// them when the day ends.
    func testADayAtTheDoorThroughTheRealDrivers() throws {
        let path = directory + "/gateway.toml"
        let textfile = directory + "/metrics.prom"
        try FileManagerless.write(path, """
        [gateway]
        id = "door-day"
        state_dir = "\(directory)/state"

        [bluetooth]
        transport = "tcp:127.0.0.1:1"

        [metrics]
        textfile = "\(textfile)"

        [[person]]
        id = "u_1"
        [[person.tag]]
        id = "tag-1"
        address = "C0:00:00:00:00:01"

        [[person]]
        id = "u_2"
        [[person.tag]]
        id = "tag-2"
        address = "C0:00:00:00:00:02"
        """, mode: 0o600)
        let configuration = try GatewayConfiguration.load(path: path)
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let transport = AnsweringTransport()
        let agent = GatewayAgent(options: .init(configurationPath: path, configuration: configuration, appVersion: "test",
                                                transport: transport), loop: loop)
        let start = loop.now
        let hour = Duration.seconds(3600)
        // (person's tag, arrives, leaves), hours after start; a report every 2 s while there.
        let visits: [(tag: UInt8, person: String, from: Duration, to: Duration)] = [
            (1, "u_1", hour * 8, hour * 12), (2, "u_2", hour * 9, hour * 18), (1, "u_1", hour * 13, hour * 17),
        ]
        for visit in visits {
            var next = start + visit.from
            func advertise() {
                guard next < start + visit.to else { return }
                transport.inject(report(from: visit.tag))
                next = next + .seconds(2)
                _ = loop.schedule(at: next) { advertise() }
            }
            _ = loop.schedule(at: next) { advertise() }
        }
        _ = loop.schedule(at: start + hour * 24) { agent.shutdown(signal: "the test") }

        XCTAssertEqual(agent.run(), .stopped)

        let store = try Store(path: Store.path(stateDirectory: configuration.gateway.stateDirectory))
        let events = try store.list(states: [.pending], limit: 20)
        XCTAssertEqual(events.map { "\($0.personId) \($0.type)" }, [
            "u_1 checkin", "u_2 checkin", "u_1 checkout", "u_1 checkin", "u_1 checkout", "u_2 checkout",
        ])
        XCTAssertEqual(events.map(\.sequence), Array(1 ... 6))
        let wallAtStart = loop.wallMilliseconds - Self.milliseconds(loop.now - start)
        let presence = configuration.presence
        // Each checkin within the window (and a read pause) of the first report; each
        // checkout once lost_after_s and leave_after_s have passed since the last one
        // (two seconds before the visit's end), within a read pause.
        let expected: [(at: Duration, slack: Duration)] = [
            (hour * 8, presence.window + .seconds(1)), (hour * 9, presence.window + .seconds(1)),
            (hour * 12 - .seconds(2) + presence.lostAfter + presence.leaveAfter, .seconds(1)),
            (hour * 13, presence.window + .seconds(1)),
            (hour * 17 - .seconds(2) + presence.lostAfter + presence.leaveAfter, .seconds(1)),
            (hour * 18 - .seconds(2) + presence.lostAfter + presence.leaveAfter, .seconds(1)),
        ]
        for (event, expectation) in zip(events, expected) {
            let at = event.createdAtMillis - wallAtStart
            let due = Self.milliseconds(expectation.at)
            XCTAssertGreaterThanOrEqual(at, due, "\(event.personId) \(event.type)")
            XCTAssertLessThanOrEqual(at, due + Self.milliseconds(expectation.slack), "\(event.personId) \(event.type)")
        }
        let metrics = try XCTUnwrap(FileManagerless.read(textfile))
        XCTAssertTrue(metrics.contains(#"beacon_gateway_events_total{type="checkin"} 3"#), metrics)
        XCTAssertTrue(metrics.contains(#"beacon_gateway_events_total{type="checkout"} 3"#), metrics)
        XCTAssertTrue(metrics.contains("beacon_gateway_persons_present 0"), metrics)
    }
}
