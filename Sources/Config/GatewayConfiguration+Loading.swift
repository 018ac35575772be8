extension GatewayConfiguration {
    /// Configuration files larger than this are refused before parsing (a real one is a
    /// few kilobytes; this bounds memory whatever the path points at).
    public static let maximumFileSize = 1 << 20

    /// Reads, parses and validates the configuration file at `path`, and reads the secret
    /// files it names.
    ///
    /// - Throws: every problem found, each with file, line and key.
    public static func load(
        path: String, fileSystem: any ConfigurationFileSystem = SystemFileSystem()
    ) throws(ConfigurationError) -> GatewayConfiguration {
        func fail(_ message: String) -> ConfigurationError {
            ConfigurationError(issues: [ConfigIssue(file: path, line: 0, key: "", message: message)])
        }
        let snapshot: FileSnapshot
        do {
            snapshot = try fileSystem.read(path, limit: maximumFileSize)
        } catch {
            throw fail("the configuration file \(error)")
        }
        guard snapshot.isRegularFile else { throw fail("the configuration file is not a regular file") }
        guard !snapshot.isTruncated else {
            throw fail("the configuration file is larger than \(maximumFileSize / 1024) KiB")
        }
        guard let text = String(validating: snapshot.bytes, as: UTF8.self) else {
            let line = lineOfFirstInvalidUTF8(snapshot.bytes)
            throw ConfigurationError(issues: [ConfigIssue(file: path, line: line, key: "", message: "the configuration file is not valid UTF-8 text")])
        }
        return try parse(text: text, file: path, fileSystem: fileSystem, permissions: snapshot.permissions)
    }

    /// Parses and validates configuration text; `file` names it in issues and is the base of
    /// relative secret-file paths. Secret files are read through `fileSystem`.
    /// `permissions`, the file's mode when known, refuses secrets written inline in a file
    /// that group or others can read.
    ///
    /// - Throws: every problem found, each with file, line and key, sorted by line.
    public static func parse(
        text: String, file: String, fileSystem: any ConfigurationFileSystem = SystemFileSystem(),
        permissions: UInt32? = nil
    ) throws(ConfigurationError) -> GatewayConfiguration {
        guard text.utf8.count <= maximumFileSize else {
            throw ConfigurationError(issues: [ConfigIssue(file: file, line: 0, key: "", message: "the configuration is larger than \(maximumFileSize / 1024) KiB")])
        }
        // TOML refuses a NUL anywhere; said plainly, since it means the file is not text.
        if let nul = text.utf8.firstIndex(of: 0) {
            let line = text.utf8[..<nul].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            throw ConfigurationError(issues: [ConfigIssue(file: file, line: line, key: "", message: "contains a NUL byte; is this a text file?")])
        }
        // One reading, bounded by TOMLInputLimits (this parse also runs on every SIGHUP of
        // the agent): the limits' issues name the key last written, syntax errors the line.
        let root: [String: ConfigValue]
        do {
            root = try TOMLParser.parse(text)
        } catch {
            switch error.kind {
            case .inputLimit:
                throw ConfigurationError(issues: [ConfigIssue(file: file, line: error.line, key: error.key, message: error.message)])
            case .syntax:
                throw ConfigurationError(issues: [ConfigIssue(
                    file: file, line: error.line, key: "", message: "TOML syntax error: \(error.message)"
                )])
            }
        }

        let diagnostics = Diagnostics(file: file, text: text)
        let decoder = ConfigurationDecoder(
            diagnostics: diagnostics, fileSystem: fileSystem, baseDirectory: directory(of: file),
            configurationFilePermissions: permissions
        )
        let configuration = decoder.decode(root: root)
        guard diagnostics.isEmpty, let configuration else {
            var issues = diagnostics.sortedIssues
            if issues.isEmpty {
                // Not expected: every failed decode reports why. Never throw an empty error.
                issues = [ConfigIssue(file: file, line: 0, key: "", message: "invalid configuration")]
            }
            let ledsAlone = ConfigurationDecoder(
                diagnostics: Diagnostics(file: file, text: text), fileSystem: fileSystem, baseDirectory: directory(of: file)
            ).decodeLEDsAlone(root: root)
            throw ConfigurationError(issues: issues, salvagedLEDs: ledsAlone)
        }
        return configuration
    }

    /// `/etc/beacon-gateway` for `/etc/beacon-gateway/gateway.toml`; `""` for a bare name.
    static func directory(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "" }
        return slash == file.startIndex ? "/" : String(file[..<slash])
    }

    private static func lineOfFirstInvalidUTF8(_ bytes: [UInt8]) -> Int {
        // Decode line by line: the first line that does not survive validation holds it.
        var line = 1
        for chunk in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if String(validating: chunk, as: UTF8.self) == nil { return line }
            line += 1
        }
        return 0
    }
}
