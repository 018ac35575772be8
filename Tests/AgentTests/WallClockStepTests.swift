import Config
import EventLoop
import GatewayCore
import XCTest
@testable import Agent

/// The agent's event times follow the system's wall clock when it is stepped (NTP's first
/// sync on a Pi without a real-time clock), instead of the clock as it was at start.
final class WallClockStepTests: XCTestCase {
    func testEventTimesFollowAStepOfTheWallClock() {
        let configuration = GatewayConfiguration(gateway: .init(id: "door-1"))
        let agent = GatewayAgent(options: .init(configurationPath: "gateway.toml", configuration: configuration, appVersion: "test"))
        let now = agent.loop.now
        let atStart = agent.presence.wallClock.wallMilliseconds(at: now)
        var wall = SystemClock().wallMilliseconds + 3_600_000
        agent.readWallClock = { wall }
        _ = agent.clockSynchronisedNow()
        let stepped = agent.presence.wallClock.wallMilliseconds(at: now)
        XCTAssertGreaterThanOrEqual(stepped - atStart, 3_600_000 - 1_000, "an hour ahead, less the test's own time")
        XCTAssertLessThan(stepped - atStart, 3_600_000 + 60_000)

        // Without a step, only the reading moves (as the monotonic clock does).
        wall -= 3_600_000
        _ = agent.clockSynchronisedNow()
        XCTAssertLessThan(abs(agent.presence.wallClock.wallMilliseconds(at: now) - atStart), 60_000)
    }
}
