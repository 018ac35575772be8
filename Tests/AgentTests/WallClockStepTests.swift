import Config
import EventLoop
import XCTest
@testable import Agent

/// The agent's event times follow the system's wall clock when it is stepped (NTP's first
/// sync on a Pi without a real-time clock), instead of the clock as it was at start.
final class WallClockStepTests: XCTestCase {
    func testEventTimesFollowAStepOfTheWallClock() {
        let configuration = GatewayConfiguration(gateway: .init(id: "door-1"))
        let clock = ManualClock()
        let virtual = VirtualEventLoop(clock: clock)
        let agent = GatewayAgent(options: .init(configurationPath: "gateway.toml", configuration: configuration, appVersion: "test"),
                                 loop: virtual.loop)
        let now = agent.loop.now
        let atStart = agent.presence.wallClock.wallMilliseconds(at: now)
        XCTAssertEqual(atStart, clock.wallMilliseconds)

        clock.wallOriginMilliseconds += 3_600_000
        _ = agent.clockSynchronisedNow()
        XCTAssertEqual(agent.presence.wallClock.wallMilliseconds(at: now) - atStart, 3_600_000, "an hour ahead, exactly")

        // Stepped back: followed too.
        clock.wallOriginMilliseconds -= 3_600_000
        _ = agent.clockSynchronisedNow()
        XCTAssertEqual(agent.presence.wallClock.wallMilliseconds(at: now), atStart)
    }
}
