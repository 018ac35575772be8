import Config
import EventLoop
import XCTest
@testable import Agent

/// The agent reads the clock's synchronisation through a seam: here a switch.
final class ClockSyncTests: XCTestCase {
    final class Switch: ClockSyncSource {
        var isSynchronised = false
    }

    func testEventsAndStatusFollowTheClocksSynchronisation() {
        let configuration = GatewayConfiguration(gateway: .init(id: "door-1"))
        let agent = GatewayAgent(options: .init(configurationPath: "gateway.toml", configuration: configuration, appVersion: "test"))
        let clock = Switch()
        agent.clockSync = clock
        XCTAssertFalse(agent.clockSynchronisedNow())
        XCTAssertFalse(agent.core.clockSynced, "events decided now carry clockSynced=false")
        clock.isSynchronised = true
        XCTAssertTrue(agent.clockSynchronisedNow())
    }

    /// A replay's events carry the capture's recorded times: an unsynchronised system
    /// clock neither marks them nor is warned about (the warning comes with the core's
    /// change to unsynchronised, which must not happen).
    func testAReplayIgnoresTheSystemClocksSynchronisation() {
        var configuration = GatewayConfiguration(gateway: .init(id: "door-1"))
        configuration.bluetooth.transport = .btsnoop(path: "/nonexistent/door.btsnoop")
        let agent = GatewayAgent(options: .init(configurationPath: "gateway.toml", configuration: configuration, appVersion: "test"))
        agent.clockSync = Switch()
        let actions = agent.core.observeClock(agent.readClock(), at: agent.loop.now)
        XCTAssertTrue(actions.isEmpty, "no warning that events carry clockSynced=false: \(actions)")
        XCTAssertTrue(agent.core.clockSynced)
        XCTAssertTrue(agent.clockSynchronisedNow())
        XCTAssertTrue(agent.core.clockSynced, "events decided now carry clockSynced=true")
    }

}
