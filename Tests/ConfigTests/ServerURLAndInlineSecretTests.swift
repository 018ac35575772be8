import Config
import XCTest

/// `server.url`: clear text only to loopback, user-info never shown; secrets written inline
/// are refused in a file that group or others can read, as secret files are.
final class ServerURLAndInlineSecretTests: XCTestCase {
    private func server(_ url: String) -> String {
        """
        [gateway]
        id = "door-1"
        [server]
        url = "\(url)"
        token_file = "/etc/bg/token"
        """
    }

    func testPlainHTTPIsRefusedForANonLoopbackHost() {
        let rule = "plain http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use https://"
        for url in ["http://10.0.0.5:8080", "http://attendance.example.org/api", "http://127.1", "http://[::2]:8080",
                    "http://localhost.evil.example"] {
            assertIssues(server(url), fileSystem: standardFileSystem(), [#"gateway.toml:4: server.url: \#(rule), got "\#(url)""#])
        }
    }

    func testPlainHTTPToLoopbackAndHTTPSAnywhereAreAccepted() throws {
        for url in ["http://127.0.0.1:8080", "http://127.3.2.1", "http://localhost:8080/base", "http://LOCALHOST",
                    "http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]/", "https://10.0.0.5:8443", "https://attendance.example.org"] {
            let config = try GatewayConfiguration.parse(text: server(url), file: "gateway.toml", fileSystem: standardFileSystem())
            XCTAssertEqual(config.server?.url, url)
        }
    }

    func testUserInfoIsNeverShown() throws {
        let config = try GatewayConfiguration.parse(text: server("https://gw:hunter2@attendance.example.org/base"),
                                                    file: "gateway.toml", fileSystem: standardFileSystem(), permissions: 0o600)
        let rendered = config.renderEffective()
        XCTAssertFalse(rendered.contains("hunter2"), rendered)
        XCTAssertTrue(rendered.contains(#"url = "https://attendance.example.org/base""#), rendered)
        XCTAssertFalse("\(config)".contains("hunter2"))
        XCTAssertFalse(String(reflecting: config.server!).contains("hunter2"))
        XCTAssertEqual(config.server?.displayURL, "https://attendance.example.org/base")
        // Nor in an error about the URL.
        assertIssues(server("http://gw:hunter2@10.0.0.5"), fileSystem: standardFileSystem(), [
            #"gateway.toml:4: server.url: plain http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use https://, got "http://10.0.0.5""#,
        ])
        assertIssues(server("ftp://gw:hunter2@example.org"), fileSystem: standardFileSystem(), [
            "gateway.toml:4: server.url: must start with http:// or https://",
        ])
    }

    private let person = """
    [gateway]
    id = "door-1"
    [[person]]
    id = "u_1"
    [[person.tag]]
    id = "t1"
    irk = "\(ValidConfigurationTests.irkHex)"
    key = "\(ValidConfigurationTests.tagKeyHex)"
    """

    func testInlineSecretsInAReadableFileAreRefusedLikeSecretFiles() {
        for mode: UInt32 in [0o644, 0o640, 0o604] {
            let exposed = "/etc/bg/gateway.toml must not be accessible to group or others (mode \(String(mode, radix: 8).count == 3 ? "0" : "")\(String(mode, radix: 8))); run `chown beacon-gateway: /etc/bg/gateway.toml && chmod 600 /etc/bg/gateway.toml` (the service reads it as the user beacon-gateway)"
            XCTAssertThrowsError(try GatewayConfiguration.parse(text: person, file: "/etc/bg/gateway.toml", fileSystem: standardFileSystem(), permissions: mode)) { error in
                XCTAssertEqual((error as? ConfigurationError)?.issues.map(\.description), [
                    "/etc/bg/gateway.toml:7: person[1].tag[1].irk: holds a secret, and \(exposed)",
                    "/etc/bg/gateway.toml:8: person[1].tag[1].key: holds a secret, and \(exposed)",
                ])
            }
        }
        XCTAssertThrowsError(try GatewayConfiguration.parse(
            text: server("https://gw:hunter2@attendance.example.org"), file: "/etc/bg/gateway.toml",
            fileSystem: standardFileSystem(), permissions: 0o644
        )) { error in
            XCTAssertEqual((error as? ConfigurationError)?.issues.map(\.description), [
                "/etc/bg/gateway.toml:4: server.url: holds a secret, and /etc/bg/gateway.toml must not be accessible to group or others (mode 0644); run `chown beacon-gateway: /etc/bg/gateway.toml && chmod 600 /etc/bg/gateway.toml` (the service reads it as the user beacon-gateway)",
            ])
        }
    }

    func testInlineSecretsInAProtectedFileAndReadableFilesWithoutSecretsAreAccepted() throws {
        let config = try GatewayConfiguration.parse(text: person, file: "/etc/bg/gateway.toml", fileSystem: standardFileSystem(), permissions: 0o600)
        XCTAssertEqual(config.persons.first?.tags.first?.key?.count, 32)
        _ = try GatewayConfiguration.parse(text: server("https://attendance.example.org"), file: "/etc/bg/gateway.toml",
                                           fileSystem: standardFileSystem(), permissions: 0o644)
    }
}
