import Config
import ControllerFixtures
import EventLoop
import HCI
import Journal
import XCTest
@testable import Agent

/// The agent's one list of drivers on virtual time, with every driver a door can have
/// (the store, the server roster, the indicators, delivery, the fleet's endpoints, the
/// controller in memory, the door beacon, connections, an enrolment driver): a SIGHUP's
/// log level reaches each of them, and the stop reaches each; a start cut short by a
/// controller that cannot be opened still stops every driver it started.
extension AgentOnVirtualTimeTests {
    private var path: String { directory + "/gateway.toml" }

    /// A door with a server (nothing listens there: requests fail, which is all this needs)
    /// and its roster, a door beacon and a tag tracked by its connection.
    private func writeConfiguration(level: String) throws {
        try FileManagerless.write(path, """
        [gateway]
        id = "door-drivers"
        state_dir = "\(directory)/state"
        log_level = "\(level)"

        [bluetooth]
        transport = "tcp:127.0.0.1:1"

        [server]
        url = "http://127.0.0.1:1"
        heartbeat_s = 0
        roster = true

        [advertise]
        ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10:3"

        [[person]]
        id = "tracked"
        [[person.tag]]
        id = "t-tracked"
        address = "C0:00:00:00:00:03"
        track = "connection"
        """, mode: 0o600)
    }

    private static func names(_ drivers: [any AgentDriver]) -> [String] {
        drivers.map { "\(type(of: $0))" }
    }

    func testASIGHUPsLogLevelReachesEveryDriverAndTheStopReachesEvery() throws {
        try writeConfiguration(level: "warning")
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let agent = GatewayAgent(options: .init(configurationPath: path, configuration: try GatewayConfiguration.load(path: path),
                                                appVersion: "test", transport: AnsweringTransport()), loop: loop)
        var levels: [String: Severity] = [:]
        var listed: [String] = []
        _ = loop.schedule(after: .seconds(5)) {
            // Asked for on the status socket in service; built here the same way.
            XCTAssertNotNil(agent.enrolmentDriver())
            do {
                try self.writeConfiguration(level: "error")
            } catch {
                XCTFail("\(error)")
            }
            agent.reload()
            listed = Self.names(agent.drivers)
            for driver in agent.drivers { levels["\(type(of: driver))"] = driver.log.minimumLevel }
            agent.shutdown(signal: "the test")
        }

        XCTAssertEqual(agent.run(), .stopped)

        XCTAssertEqual(listed, [
            "StoreDriver", "RosterDriver", "IndicatorsDriver", "DeliveryDriver", "SiteBusDriver", "FleetDriver", "ControllerLinkDriver",
            "DoorBeaconAdvertiser", "ConnectionsDriver", "EnrolmentDriver",
        ], "every driver the door can have, in start order")
        XCTAssertEqual(agent.log.minimumLevel, .error, "the agent's own lines")
        for name in listed { XCTAssertEqual(levels[name], .error, name) }
        for driver in agent.drivers {
            XCTAssertEqual(agent.lifecycle.phase(of: driver), .closed, "\(type(of: driver)) stopped and closed")
        }
        XCTAssertNil(agent.store, "the store closed last")
    }

    func testAStartCutShortByTheControllerStillStopsEveryDriverItStarted() throws {
        try writeConfiguration(level: "error")
        var configuration = try GatewayConfiguration.load(path: path)
        // A serial line at a rate no UART takes: the controller cannot be opened.
        configuration.bluetooth.transport = .serial(path: directory + "/tty", baud: 12345)
        let agent = GatewayAgent(options: .init(configurationPath: path, configuration: configuration, appVersion: "test"),
                                 loop: VirtualEventLoop().loop)

        guard case .failed = agent.run() else { return XCTFail("the controller cannot be opened") }

        XCTAssertEqual(Self.names(agent.drivers), ["StoreDriver", "RosterDriver", "IndicatorsDriver", "DeliveryDriver", "SiteBusDriver", "FleetDriver"],
                       "every driver started before the controller")
        for driver in agent.drivers {
            XCTAssertEqual(agent.lifecycle.phase(of: driver), .closed, "\(type(of: driver)) stopped and closed")
        }
        XCTAssertNil(agent.store, "what must survive written, the store closed")
    }
}
