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
    private var directory = ""

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
}
