import Config
import XCTest

/// Parses `text` as `gateway.toml` and asserts it fails with exactly these rendered issues,
/// in this order.
func assertIssues(
    _ text: String, fileSystem: InMemoryFileSystem = InMemoryFileSystem(), _ expected: [String],
    file: StaticString = #filePath, line: UInt = #line
) {
    do {
        let config = try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: fileSystem)
        XCTFail("expected issues, but the configuration loaded: \(config.gateway.id)", file: file, line: line)
    } catch {
        XCTAssertEqual(error.issues.map(\.description), expected, file: file, line: line)
        XCTAssertEqual(error.description, expected.joined(separator: "\n"), file: file, line: line)
    }
}

/// A file system with the secret files most tests mention, correctly protected.
func standardFileSystem() -> InMemoryFileSystem {
    var fs = InMemoryFileSystem()
    fs.add("/etc/bg/token", "token-abc\n")
    fs.add("/etc/bg/master.key", ValidConfigurationTests.masterKeyHex + "\n")
    return fs
}
