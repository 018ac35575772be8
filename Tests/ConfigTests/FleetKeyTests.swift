import Config
import XCTest

/// `[server] heartbeat_s` and `[metrics]` (see docs/fleet.md).
final class FleetKeyTests: XCTestCase {
    private func parse(_ text: String) throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: standardFileSystem())
    }

    func testDefaultsWithoutTheKeys() throws {
        let config = try parse("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        """)
        XCTAssertEqual(config.server?.heartbeatInterval, .seconds(60))
        XCTAssertNil(config.metrics)
    }

    func testHeartbeatZeroTurnsItOffAndFractionsAreKept() throws {
        let off = try parse("[gateway]\nid = \"d\"\n[server]\nurl = \"https://example.org\"\nheartbeat_s = 0\n")
        XCTAssertNil(off.server?.heartbeatInterval)
        XCTAssertTrue(off.renderEffective().contains("heartbeat_s = 0\n"))
        let fast = try parse("[gateway]\nid = \"d\"\n[server]\nurl = \"https://example.org\"\nheartbeat_s = 1.5\n")
        XCTAssertEqual(fast.server?.heartbeatInterval, .milliseconds(1500))
    }

    func testHeartbeatOutOfRangeOrWrongTypeNamesFileLineAndKey() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        heartbeat_s = 0.5
        """, [
            "gateway.toml:5: server.heartbeat_s: must be 0 (off) or between 1 and 86400 (seconds), got 0.5",
        ])
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        heartbeat_s = "60"
        """, [
            "gateway.toml:5: server.heartbeat_s: must be a number (seconds; 0 turns heartbeats off), got string",
        ])
    }

    func testMetricsAddressesAndTextfile() throws {
        let config = try parse("""
        [gateway]
        id = "door-1"
        [metrics]
        listen = "[::1]:9464"
        textfile = "/var/lib/prometheus/node-exporter/beacon_gateway.prom"
        """)
        XCTAssertEqual(config.metrics?.listen, .init(host: "::1", port: 9464))
        XCTAssertEqual(config.metrics?.textfile, "/var/lib/prometheus/node-exporter/beacon_gateway.prom")
        let rendered = config.renderEffective()
        XCTAssertTrue(rendered.contains("[metrics]\nlisten = \"[::1]:9464\"\n"), rendered)
        XCTAssertEqual(try parse(rendered).metrics, config.metrics)
        XCTAssertEqual(GatewayConfiguration.ListenAddress(parsing: "127.0.0.1:9464"), .init(host: "127.0.0.1", port: 9464))
        XCTAssertEqual(GatewayConfiguration.ListenAddress(parsing: "localhost:1"), .init(host: "localhost", port: 1))
        for bad in ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "example.org:9464", "::1:9464", "[::1]9464", "1.2.3:9", "127.0.0.1:+9", "+1.2.3.4:9"] {
            XCTAssertNil(GatewayConfiguration.ListenAddress(parsing: bad), bad)
        }
        let empty = try parse("[gateway]\nid = \"d\"\n[metrics]\nlisten = \"\"\ntextfile = \"\"\n")
        XCTAssertEqual(empty.metrics, .init())
    }

    func testBadMetricsKeysNameFileLineAndKey() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [metrics]
        listen = "0.0.0.0"
        textfile = "metrics.prom"
        port = 9464
        """, [
            #"gateway.toml:4: metrics.listen: must be "HOST:PORT" with a numeric IPv4 address, [IPv6] or localhost and a port 1…65535, e.g. "127.0.0.1:9464", got "0.0.0.0""#,
            #"gateway.toml:5: metrics.textfile: must be the absolute path of a file, e.g. "/var/lib/prometheus/node-exporter/beacon_gateway.prom", got "metrics.prom""#,
            "gateway.toml:6: metrics.port: unknown key (known here: listen, textfile)",
        ])
    }
}
