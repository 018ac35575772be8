#if canImport(Glibc)
import Glibc
#endif
import Config
import EventLoop
import Fleet
import Journal
import XCTest
@testable import Agent

/// The fleet's endpoints on virtual time: the metrics textfile's cadence, its recovery
/// once its directory is there, reloads and the stop. (Heartbeats over HTTP and the
/// status socket are shown against a real server and the real `status` command by the
/// integration suite.)
final class FleetDriverTests: XCTestCase {
    private var directory = ""
    private var snapshots = 0

    override func setUp() {
        directory = FileManagerless.temporaryDirectory()
        // The status socket in a directory of this test's, not the system's.
        setenv("RUNTIME_DIRECTORY", directory, 1)
    }

    override func tearDown() {
        unsetenv("RUNTIME_DIRECTORY")
    }

    private func configuration(textfile: String) throws -> GatewayConfiguration {
        let path = directory + "/gateway.toml"
        try FileManagerless.write(path, """
        [gateway]
        id = "door-fleet"
        state_dir = "\(directory)/state"

        [bluetooth]
        transport = "tcp:127.0.0.1:1"

        [metrics]
        textfile = "\(textfile)"
        """, mode: 0o600)
        return try GatewayConfiguration.load(path: path)
    }

    private func makeDriver(_ loop: EventLoop) -> FleetDriver {
        FleetDriver(
            loop: loop, log: LogSink(minimumLevel: .error, destination: .terminal),
            counters: FleetObserver(now: loop.now, wallMilliseconds: loop.wallMilliseconds), appVersion: "test",
            sources: FleetDriver.Sources(
                snapshot: { [unowned self] in
                    self.snapshots += 1
                    return FleetSnapshot(
                        gatewayId: "door-fleet", version: "test", startedAtMillis: 0, nowMillis: 0, uptimeSeconds: 0,
                        clockSynced: true, controller: ControllerSnapshot(state: .up, address: nil, family: nil, resets: 0),
                        scanning: true, present: self.snapshots, reportsPerSecond: 0, outbox: OutboxSnapshot(), roster: .file(persons: 0),
                        lastEventAtMillis: nil, counters: FleetCounters()
                    )
                },
                statusReport: { XCTFail("no status request in this test"); fatalError() },
                beforeHeartbeat: {},
                takeOver: { _, _ in nil },
                admits: { _ in true }
            )
        )
    }

    func testTheTextfileIsWrittenEveryFifteenSecondsOnceItsDirectoryIsThereAndNotAfterTheStop() throws {
        let virtual = VirtualEventLoop()
        let textfile = directory + "/node_exporter/beacon_gateway.prom"
        let configuration = try configuration(textfile: textfile)
        let driver = makeDriver(virtual.loop)
        driver.start(configuration)
        XCTAssertEqual(snapshots, 1, "written at start")
        XCTAssertNil(FileManagerless.read(textfile), "its directory is not there yet")

        XCTAssertEqual(mkdir(directory + "/node_exporter", 0o755), 0)
        try virtual.advance(by: .seconds(14))
        XCTAssertNil(FileManagerless.read(textfile), "not before the interval")
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(snapshots, 2)
        XCTAssertTrue(FileManagerless.read(textfile)?.contains("beacon_gateway_persons_present 2") == true, FileManagerless.read(textfile) ?? "no file")
        try virtual.advance(by: .seconds(15))
        XCTAssertTrue(FileManagerless.read(textfile)?.contains("beacon_gateway_persons_present 3") == true)

        // The same settings again: the schedule goes on; a new file: written at once.
        driver.reload(configuration, previous: configuration)
        XCTAssertEqual(snapshots, 3)
        let moved = directory + "/node_exporter/other.prom"
        driver.reload(try self.configuration(textfile: moved), previous: configuration)
        XCTAssertEqual(snapshots, 4)
        XCTAssertTrue(FileManagerless.read(moved)?.contains("beacon_gateway_persons_present 4") == true)
        try virtual.advance(by: .seconds(15))
        XCTAssertEqual(snapshots, 5, "one schedule, for the new file only")

        driver.stop()
        try virtual.advance(by: .seconds(60))
        XCTAssertEqual(snapshots, 5, "nothing written after the stop")
    }
}
