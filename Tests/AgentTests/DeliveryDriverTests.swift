import Config
import EventLoop
import Journal
import Store
import XCTest
@testable import Agent

/// Delivery as a list of sinks (docs/event-api.md, "Sinks"): the store is told which sinks
/// the configuration has, each sink is made, started, kicked, reloaded and stopped on its
/// own, and one that cannot be built still holds its events.
final class DeliveryDriverTests: XCTestCase {
    private var directory = ""

    override func setUp() {
        directory = FileManagerless.temporaryDirectory()
    }

    final class RecordingSink: OutboxSink {
        let name: String
        var calls: [String] = []
        init(name: String) { self.name = name }
        func start() { calls.append("start") }
        func stop() { calls.append("stop") }
        func kick() { calls.append("kick") }
        func sinkStatus() -> SinkStatus? { nil }
    }

    /// A sink configured while `[server]` is there; `broken` cannot be built.
    final class Wiring: SinkWiring {
        let name: String
        let broken: Bool
        var made: [RecordingSink] = []
        var reloads = 0
        init(name: String, broken: Bool = false) {
            self.name = name
            self.broken = broken
        }
        func isConfigured(_ configuration: GatewayConfiguration) -> Bool { configuration.server != nil }
        func make(_ configuration: GatewayConfiguration, context: SinkContext) throws -> any OutboxSink {
            if broken { throw SinkWiringError.notConfigured(name) }
            made.append(RecordingSink(name: name))
            return made[made.count - 1]
        }
        func reload(_ sink: any OutboxSink, _ configuration: GatewayConfiguration) throws { reloads += 1 }
    }

    private func configuration(server: Bool) throws -> GatewayConfiguration {
        let path = directory + "/gateway.toml"
        try FileManagerless.write(path, """
        [gateway]
        id = "door-sinks"
        state_dir = "\(directory)"

        [bluetooth]
        transport = "tcp:127.0.0.1:1"
        \(server ? "\n[server]\nurl = \"http://127.0.0.1:1\"\n" : "")
        """, mode: 0o600)
        return try GatewayConfiguration.load(path: path)
    }

    func testEverySinkRunsOnItsOwnAndTheStoreKnowsThemAll() throws {
        let store = try Store(path: Store.path(stateDirectory: directory))
        let virtual = VirtualEventLoop()
        let mqtt = Wiring(name: "mqtt")
        let file = Wiring(name: "file", broken: true)
        let driver = DeliveryDriver(loop: virtual.loop, log: LogSink(minimumLevel: .error, destination: .terminal),
                                    store: { store }, sinks: [mqtt, file])
        let withSinks = try configuration(server: true)
        driver.start(withSinks)
        XCTAssertEqual(try store.configuredSinks(), ["file", "mqtt"], "a sink that cannot be built still holds its events")
        XCTAssertEqual(mqtt.made.count, 1)
        driver.kick()
        driver.reload(withSinks, previous: withSinks)
        XCTAssertEqual(mqtt.reloads, 1)
        XCTAssertEqual(mqtt.made[0].calls, ["start", "kick"])

        let without = try configuration(server: false)
        driver.reload(without, previous: withSinks)
        XCTAssertEqual(mqtt.made[0].calls, ["start", "kick", "stop"])
        XCTAssertEqual(try store.configuredSinks(), ["server"], "without any sink, events wait for a server")
        driver.kick()
        XCTAssertEqual(mqtt.made[0].calls.count, 3, "a stopped sink is kicked no more")

        driver.reload(withSinks, previous: without)
        XCTAssertEqual(mqtt.made.count, 2, "added again: made and started anew")
        XCTAssertEqual(try store.configuredSinks(), ["file", "mqtt"])
        driver.stop()
        XCTAssertEqual(mqtt.made[1].calls, ["start", "stop"])
    }
}
