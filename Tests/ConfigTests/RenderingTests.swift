import Config
import XCTest

/// `check-config` output and every other way a configuration can be printed.
final class RenderingTests: XCTestCase {
    private let secrets = [
        ValidConfigurationTests.masterKeyHex,
        ValidConfigurationTests.tagKeyHex,
        ValidConfigurationTests.irkHex,
        ValidConfigurationTests.token,
    ]

    private func fullConfiguration() throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(text: ValidConfigurationTests.full, file: "/etc/beacon-gateway/gateway.toml",
                                       fileSystem: ValidConfigurationTests.fileSystem)
    }

    private func assertNoSecrets(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in secrets {
            XCTAssertFalse(text.lowercased().contains(secret.lowercased()), "secret leaked in:\n\(text)", file: file, line: line)
        }
        // Nor in any other spelling of the key bytes.
        XCTAssertFalse(text.contains("0, 1, 2, 3, 4, 5"), "key bytes leaked in:\n\(text)", file: file, line: line)
        XCTAssertFalse(text.contains("241, 233, 223"), "key bytes leaked in:\n\(text)", file: file, line: line)
    }

    func testRenderEffectiveMasksSecretsAndShowsSecretFilesByPath() throws {
        let text = try fullConfiguration().renderEffective()
        assertNoSecrets(text)
        XCTAssertTrue(text.contains(#"token_file = "/etc/beacon-gateway/token""#), text)
        XCTAssertTrue(text.contains(#"master_key_file = "/etc/beacon-gateway/master.key""#), text)
        XCTAssertTrue(text.contains(#"key = "********""#), text)
        XCTAssertTrue(text.contains(#"irk = "********""#), text)
    }

    func testRenderEffectiveFillsInDefaults() throws {
        let config = try GatewayConfiguration.parse(text: "[gateway]\nid = \"door-1\"\n", file: "gateway.toml",
                                                    fileSystem: InMemoryFileSystem())
        let text = config.renderEffective()
        for line in [#"state_dir = "/var/lib/beacon-gateway""#, #"log_level = "info""#, #"transport = "hci0""#,
                     #"scan = "passive""#, "tag_interval_ms = 700", #"connect_mode = "accept-list""#,
                     "max_connections = 3", "enter_rssi = -70", "exit_rssi = -75", "window_s = 3",
                     "min_samples = 2", "lost_after_s = 10", "leave_after_s = 180", "away_after_s = 60",
                     "proof_ttl_s = 600"] {
            XCTAssertTrue(text.contains("\n" + line + "\n"), "missing \(line) in:\n\(text)")
        }
    }

    func testRenderedConfigurationParsesBackToTheSame() throws {
        // Without masked secrets the output is itself a valid configuration file.
        let source = """
        [gateway]
        id = "door-1"
        site = "Site \\"A\\" \\\\ B"
        [bluetooth]
        transport = "serial:/dev/ttyACM0@115200"
        scan_duty = 0.25
        [presence]
        window_s = 2.5
        [server]
        url = "https://example.org"
        ca_file = "/etc/bg/ca.pem"
        [leds]
        green = 5
        amber = 6
        red = 7
        [advertise]
        ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10:3"
        [[person]]
        id = "u_1"
        name = "Zoë"
          [[person.tag]]
          id = "t1"
          eddystone_uid = "edd1ebeac04e5defa017:0123456789ab"
          address = "C0:11:22:33:44:55"
          track = "connection"
        """
        var fs = InMemoryFileSystem()
        fs.add("/etc/bg/ca.pem", mode: 0o644, "pem")
        let config = try GatewayConfiguration.parse(text: source, file: "gateway.toml", fileSystem: fs)
        let again = try GatewayConfiguration.parse(text: config.renderEffective(), file: "effective.toml", fileSystem: fs)
        XCTAssertEqual(again, config)
        XCTAssertEqual(again.gateway.site, #"Site "A" \ B"#)
    }

    func testDescriptionsAndDumpsMaskSecrets() throws {
        let config = try fullConfiguration()
        assertNoSecrets("\(config)")
        assertNoSecrets(String(reflecting: config))
        var dumped = ""
        dump(config, to: &dumped)
        assertNoSecrets(dumped)
        assertNoSecrets("\(config.security) \(String(reflecting: config.security))")
        assertNoSecrets("\(config.server!) \(String(reflecting: config.server!))")
        for person in config.persons {
            assertNoSecrets("\(person) \(String(reflecting: person))")
            for tag in person.tags {
                assertNoSecrets("\(tag) \(String(reflecting: tag))")
                var dumpedTag = ""
                dump(tag, to: &dumpedTag)
                assertNoSecrets(dumpedTag)
            }
        }
        // The values are still there for the code that needs them.
        XCTAssertEqual(config.security.masterKey?.count, 32)
        XCTAssertEqual(config.persons[0].tags[1].key?.count, 32)
    }

    func testErrorsNeverEchoSecrets() {
        var fs = InMemoryFileSystem()
        fs.add("/etc/bg/master.key", "0011223344556677889900112233445566778899001122334455667788990011zz")
        assertIssues("""
        [gateway]
        id = "door-1"
        [security]
        master_key_file = "/etc/bg/master.key"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "t1"
          irk = "00112233445566778899aabbccddeeffzz"
          key = "0011223344556677889900112233445566778899001122334455667788990011zz"
        """, fileSystem: fs, [
            "gateway.toml:4: security.master_key_file: /etc/bg/master.key must contain a 256-bit key as 64 hex digits (create one with `beacon-gateway keygen --new-master`)",
            "gateway.toml:9: person[1].tag[1].irk: must be 32 hex digits (a 128-bit identity resolving key)",
            "gateway.toml:10: person[1].tag[1].key: must be 64 hex digits (the tag's 256-bit proof key)",
        ])
    }
}
