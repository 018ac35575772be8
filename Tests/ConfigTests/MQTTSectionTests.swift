import Config
import XCTest

/// `[mqtt]` (docs/site-bus.md): the broker's URL by the server's rules, the password from a
/// closed file, the topic prefixes, and the site id the topics need.
final class MQTTSectionTests: XCTestCase {
    private func mqtt(_ lines: String, site: String? = "S_HQ") -> String {
        """
        [gateway]
        id = "door-1"
        \(site.map { "site = \"\($0)\"" } ?? "")
        [mqtt]
        \(lines)
        """
    }

    private func fileSystem() -> InMemoryFileSystem {
        var fs = standardFileSystem()
        fs.add("/etc/bg/mqtt-password", "s3cret\n")
        return fs
    }

    func testAFullSectionLoadsWithItsDefaults() throws {
        let config = try GatewayConfiguration.parse(text: mqtt("""
        url = "mqtts://broker.example.org"
        username = "door-1"
        password_file = "/etc/bg/mqtt-password"
        """), file: "gateway.toml", fileSystem: fileSystem())
        let section = try XCTUnwrap(config.mqtt)
        XCTAssertEqual(section.url.description, "mqtts://broker.example.org:8883")
        XCTAssertEqual(section.password, Array("s3cret".utf8))
        XCTAssertEqual(section.topicPrefix, "beacon-gateway")
        XCTAssertEqual(section.discoveryPrefix, "homeassistant")
        XCTAssertTrue(section.events && section.presence && section.homeAssistant)
        for shown in ["\(config)", "\(section)", String(reflecting: section), "\(Mirror(reflecting: section).children.map(\.value))"] {
            XCTAssertFalse(shown.contains("s3cret") || shown.contains("115, 51"), shown)
        }
        XCTAssertTrue("\(config)".contains("[mqtt]"))
    }

    func testPlainMQTTOnlyToLoopbackAndNoCredentialsInTheURL() throws {
        XCTAssertNotNil(try GatewayConfiguration.parse(text: mqtt(#"url = "mqtt://127.0.0.1:1883""#), file: "gateway.toml", fileSystem: fileSystem()).mqtt)
        assertIssues(mqtt(#"url = "mqtt://10.0.0.5""#), fileSystem: fileSystem(), [
            #"gateway.toml:5: mqtt.url: plain mqtt:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use mqtts://, got "mqtt://10.0.0.5""#,
        ])
        assertIssues(mqtt(#"url = "mqtts://door:hunter2@broker""#), fileSystem: fileSystem(), [
            "gateway.toml:5: mqtt.url: must not hold a user name or password (use username and password_file)",
        ])
        assertIssues(mqtt(#"url = "https://broker""#), fileSystem: fileSystem(), [
            #"gateway.toml:5: mqtt.url: must start with mqtts:// (or mqtt:// to a loopback host), got "https://broker""#,
        ])
        assertIssues(mqtt(#"url = "mqtts://broker:0""#), fileSystem: fileSystem(), [
            #"gateway.toml:5: mqtt.url: has a port that is not a number from 1 to 65535, got "mqtts://broker:0""#,
        ])
    }

    func testTopicPrefixesAreTopicLevelsAndTheSiteIsRequired() {
        assertIssues(mqtt("url = \"mqtts://b\"\ntopic_prefix = \"a/+/b\""), fileSystem: fileSystem(), [
            #"gateway.toml:6: mqtt.topic_prefix: must be topic levels separated by / (none empty, no spaces, no + or #, not starting with $), got "a/+/b""#,
        ])
        assertIssues(mqtt("url = \"mqtts://b\"\ndiscovery_prefix = \"ha/\""), fileSystem: fileSystem(), [
            #"gateway.toml:6: mqtt.discovery_prefix: must be topic levels separated by / (none empty, no spaces, no + or #, not starting with $), got "ha/""#,
        ])
        assertIssues(mqtt(#"url = "mqtts://b""#, site: "Site/A"), fileSystem: fileSystem(), [
            #"gateway.toml:3: gateway.site: is a level of the site bus's topics with [mqtt]: no /, +, # or spaces, got "Site/A""#,
        ])
    }

    func testThePasswordFileIsASecretAndNeedsAUserName() {
        var open = fileSystem()
        open.add("/etc/bg/open-password", mode: 0o644, "pw\n")
        assertIssues(mqtt("url = \"mqtts://b\"\nusername = \"d\"\npassword_file = \"/etc/bg/open-password\""), fileSystem: open, [
            "gateway.toml:7: mqtt.password_file: /etc/bg/open-password must not be accessible to group or others (mode 0644); run `chown beacon-gateway: /etc/bg/open-password && chmod 600 /etc/bg/open-password` (the service reads it as the user beacon-gateway)",
        ])
        assertIssues(mqtt("url = \"mqtts://b\"\npassword_file = \"/etc/bg/mqtt-password\""), fileSystem: fileSystem(), [
            "gateway.toml:6: mqtt.password_file: needs username: the broker takes a password only with a user name",
        ])
    }
}
