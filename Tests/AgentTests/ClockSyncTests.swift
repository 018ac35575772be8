import Config
import EventLoop
import GatewayCore
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

}
