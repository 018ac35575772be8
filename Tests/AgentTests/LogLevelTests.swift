import Config
import EventLoop
import Journal
import XCTest
@testable import Agent

/// `[gateway] log_level` changed by SIGHUP reaches the agent and every driver that logs.
final class LogLevelTests: XCTestCase {
    private func configuration(_ directory: String, level: String) throws -> GatewayConfiguration {
        let path = directory + "/gateway.toml"
        try FileManagerless.write(path, """
        [gateway]
        id = "door-level"
        state_dir = "\(directory)/state"
        log_level = "\(level)"

        [bluetooth]
        transport = "tcp:127.0.0.1:1"
        """, mode: 0o600)
        return try GatewayConfiguration.load(path: path)
    }

    func testAReloadedLogLevelReachesEveryDriver() throws {
        let directory = FileManagerless.temporaryDirectory()
        let virtual = VirtualEventLoop()
        let agent = GatewayAgent(options: .init(configurationPath: directory + "/gateway.toml",
                                                configuration: try configuration(directory, level: "warning"), appVersion: "test"),
                                 loop: virtual.loop)
        agent.apply(try configuration(directory, level: "debug"))
        let levels: [(String, Severity)] = [
            ("agent", agent.log.minimumLevel), ("indicators", agent.indicators.log.minimumLevel),
            ("fleet", agent.fleetEndpoints.log.minimumLevel), ("delivery", agent.delivery.log.minimumLevel),
            ("storage", agent.storage.log.minimumLevel),
        ]
        for (driver, level) in levels { XCTAssertEqual(level, .debug, driver) }
        agent.storage.close()
    }
}
