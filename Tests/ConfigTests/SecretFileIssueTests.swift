import Config
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// Token, master key and CA files: existence, permissions and content (see docs/security.md).
final class SecretFileIssueTests: XCTestCase {
    private var temporaryDirectory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/config-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        temporaryDirectory = try String(cString: XCTUnwrap(made))
    }

    override func tearDown() {
        if let directory = opendir(temporaryDirectory) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != ".", name != ".." { unlink(temporaryDirectory + "/" + name) }
            }
            closedir(directory)
        }
        rmdir(temporaryDirectory)
    }

    /// A real file with a real mode, so the permission check runs against fstat(2).
    private func writeFile(_ name: String, _ content: String, mode: mode_t) throws -> String {
        let path = temporaryDirectory + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let bytes = Array(content.utf8)
        XCTAssertEqual(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, bytes.count)
        close(fd)
        XCTAssertEqual(chmod(path, mode), 0) // umask must not decide the test
        return path
    }

    func testWorldReadableTokenFileOnDisk() throws {
        let token = try writeFile("token", "very-secret-token\n", mode: 0o644)
        let text = """
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        token_file = "\(token)"
        """
        XCTAssertThrowsError(try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: SystemFileSystem())) { error in
            XCTAssertEqual((error as? ConfigurationError)?.description,
                           "gateway.toml:5: server.token_file: \(token) must not be accessible to group or others (mode 0644); run `chown beacon-gateway: \(token) && chmod 600 \(token)` (the service reads it as the user beacon-gateway)")
        }
    }

    func testProtectedTokenFileOnDiskLoadsAndRelativePathsFollowTheConfigFile() throws {
        _ = try writeFile("token", "  very-secret-token\n", mode: 0o600)
        let configPath = try writeFile("gateway.toml", """
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        token_file = "token"
        """, mode: 0o644)
        let config = try GatewayConfiguration.load(path: configPath)
        XCTAssertEqual(config.server?.tokenFile, temporaryDirectory + "/token")
        XCTAssertEqual(config.server?.token, Array("very-secret-token".utf8))
    }

    func testMissingConfigurationFile() {
        XCTAssertThrowsError(try GatewayConfiguration.load(path: temporaryDirectory + "/absent.toml")) { error in
            XCTAssertEqual((error as? ConfigurationError)?.description,
                           "\(temporaryDirectory)/absent.toml: the configuration file does not exist")
        }
    }

    func testConfigurationFileThatIsNotUTF8() throws {
        let path = temporaryDirectory + "/bad.toml"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let bytes: [UInt8] = Array("[gateway]\nid = \"".utf8) + [0xFF, 0xFE] + Array("\"\n".utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        XCTAssertThrowsError(try GatewayConfiguration.load(path: path)) { error in
            XCTAssertEqual((error as? ConfigurationError)?.description, "\(path):2: the configuration file is not valid UTF-8 text")
        }
    }

    func testGroupReadableMasterKey() {
        var fs = InMemoryFileSystem()
        fs.add("/etc/bg/master.key", mode: 0o640, ValidConfigurationTests.masterKeyHex)
        assertIssues("""
        [gateway]
        id = "door-1"
        [security]
        master_key_file = "/etc/bg/master.key"
        """, fileSystem: fs, [
            "gateway.toml:4: security.master_key_file: /etc/bg/master.key must not be accessible to group or others (mode 0640); run `chown beacon-gateway: /etc/bg/master.key && chmod 600 /etc/bg/master.key` (the service reads it as the user beacon-gateway)",
        ])
    }

    func testMasterKeyWithWrongContentIsNotEchoed() {
        var fs = InMemoryFileSystem()
        fs.add("/etc/bg/master.key", "hunter2-not-a-key\n")
        assertIssues("""
        [gateway]
        id = "door-1"
        [security]
        master_key_file = "/etc/bg/master.key"
        """, fileSystem: fs, [
            "gateway.toml:4: security.master_key_file: /etc/bg/master.key must contain a 256-bit key as 64 hex digits (create one with `beacon-gateway keygen --new-master`)",
        ])
    }

    func testMasterKeyThatDoesNotExistStillCountsAsConfigured() {
        // A broken master key file is one problem, not one more per require_proof tag.
        assertIssues("""
        [gateway]
        id = "door-1"
        [security]
        master_key_file = "/etc/bg/missing.key"
        [[person]]
        id = "u_1"
        require_proof = true
          [[person.tag]]
          id = "t1"
          address = "C0:11:22:33:44:55"
        """, [
            "gateway.toml:4: security.master_key_file: /etc/bg/missing.key does not exist",
        ])
    }

    func testUnreadableAndOddTokenFiles() {
        var fs = InMemoryFileSystem()
        fs.unreadable = ["/etc/bg/token"]
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        token_file = "/etc/bg/token"
        """, fileSystem: fs, [
            "gateway.toml:5: server.token_file: /etc/bg/token cannot be read by this user (permission denied)",
        ])

        fs = InMemoryFileSystem()
        fs.add("/etc/bg/token", "two words\n")
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        token_file = "/etc/bg/token"
        """, fileSystem: fs, [
            "gateway.toml:5: server.token_file: /etc/bg/token must hold one token of visible ASCII characters (no spaces, line breaks or control characters)",
        ])

        fs = InMemoryFileSystem()
        fs.add("/etc/bg/token", "\n\n")
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        token_file = "/etc/bg/token"
        """, fileSystem: fs, [
            "gateway.toml:5: server.token_file: /etc/bg/token is empty; it must hold the server's bearer token",
        ])
    }

    func testSecretFileThatIsADirectoryOrHuge() {
        var fs = InMemoryFileSystem()
        fs.files["/etc/bg"] = FileSnapshot(isRegularFile: false, permissions: 0o700)
        fs.add("/etc/bg/big.key", String(repeating: "a", count: 5000))
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        token_file = "/etc/bg"
        [security]
        master_key_file = "/etc/bg/big.key"
        """, fileSystem: fs, [
            "gateway.toml:5: server.token_file: /etc/bg is not a regular file",
            "gateway.toml:7: security.master_key_file: /etc/bg/big.key is larger than 4096 bytes; is it the right file?",
        ])
    }

    func testMissingCAFile() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        ca_file = "/etc/bg/ca.pem"
        """, [
            "gateway.toml:5: server.ca_file: /etc/bg/ca.pem does not exist",
        ])
    }

    func testEmptyCAFileMeansNone() throws {
        let config = try GatewayConfiguration.parse(text: """
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        ca_file = ""
        """, file: "gateway.toml", fileSystem: InMemoryFileSystem())
        XCTAssertNil(config.server?.caFile)
    }

    func testDirectoryAsSecretOnDisk() throws {
        let text = """
        [gateway]
        id = "door-1"
        [security]
        master_key_file = "\(temporaryDirectory)"
        """
        XCTAssertThrowsError(try GatewayConfiguration.parse(text: text, file: "gateway.toml")) { error in
            XCTAssertEqual((error as? ConfigurationError)?.description,
                           "gateway.toml:4: security.master_key_file: \(temporaryDirectory) is not a regular file")
        }
    }
}
