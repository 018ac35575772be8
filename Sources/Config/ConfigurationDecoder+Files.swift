/// Why the content of a secret file is unusable. The message names the file, never its
/// content.
struct SecretContentError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A secret file as configured: the path when the key held one, the bytes when the file
/// passed every check.
struct SecretFile {
    var path: String?
    var bytes: [UInt8]?
}

extension ConfigurationDecoder {
    /// Secret files are small; anything larger is not what the installer meant to point at.
    static let secretFileLimit = 4096

    /// Relative paths are taken from the configuration file's directory, not from wherever
    /// the service happens to be started.
    func resolve(_ path: String) -> String {
        guard !path.hasPrefix("/"), !baseDirectory.isEmpty else { return path }
        return baseDirectory == "/" ? "/" + path : baseDirectory + "/" + path
    }

    /// Reads the secret file named by `key` (see docs/security.md): it must exist, be a readable regular
    /// file, be closed to group and others, and hold what `check` accepts.
    func readSecret(
        _ key: String, in table: inout TableReader,
        check: ([UInt8], String) -> Result<[UInt8], SecretContentError>
    ) -> SecretFile {
        guard let text = table.string(key) else { return SecretFile() }
        guard !text.isEmpty else {
            table.report(key, "must be the path of a file, got \"\"")
            return SecretFile()
        }
        let path = resolve(text)
        let snapshot: FileSnapshot
        do {
            snapshot = try fileSystem.read(path, limit: Self.secretFileLimit)
        } catch {
            table.report(key, "\(path) \(error)")
            return SecretFile(path: path)
        }
        guard snapshot.isRegularFile else {
            table.report(key, "\(path) is not a regular file")
            return SecretFile(path: path)
        }
        // Checked before the content is even looked at: a readable secret is already leaked.
        if let exposed = SecretFileRule.exposure(of: path, permissions: snapshot.permissions) {
            table.report(key, exposed)
            return SecretFile(path: path)
        }
        guard !snapshot.isTruncated else {
            table.report(key, "\(path) is larger than \(Self.secretFileLimit) bytes; is it the right file?")
            return SecretFile(path: path)
        }
        switch check(snapshot.bytes, path) {
        case let .success(bytes):
            return SecretFile(path: path, bytes: bytes)
        case let .failure(error):
            table.report(key, error.message)
            return SecretFile(path: path)
        }
    }

    /// Reports `key` when it holds a secret inline and the configuration file itself is
    /// readable by group or others; returns whether it did.
    @discardableResult
    func refuseInlineSecret(_ key: String, in table: inout TableReader) -> Bool {
        guard let permissions = configurationFilePermissions,
              let exposed = SecretFileRule.exposure(of: diagnostics.file, permissions: permissions) else { return false }
        table.report(key, "holds a secret, and \(exposed)")
        return true
    }

    /// Checks that a non-secret file such as a CA certificate exists and can be read;
    /// returns its resolved path.
    func readable(_ path: String, key: String, in table: inout TableReader) -> String? {
        do {
            let snapshot = try fileSystem.read(path, limit: 0)
            guard snapshot.isRegularFile else {
                table.report(key, "\(path) is not a regular file")
                return nil
            }
            return path
        } catch {
            table.report(key, "\(path) \(error)")
            return nil
        }
    }
}

/// `0644`
func octal(_ permissions: UInt32) -> String {
    let digits = String(permissions, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
