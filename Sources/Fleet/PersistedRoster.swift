#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// What is kept of the server roster in the state directory (see docs/fleet.md): the ETag
/// of the last 200 answer (valid or not), the refusal still reported, and the last valid
/// roster's document, which is used at start while the server cannot be reached.
///
/// One file, so the three never disagree: a header of four lines, an empty line, then the
/// document as the server sent it.
///
///     beacon-gateway roster 1
///     etag "r-42"
///     error
///     body yes
///
///     {"revision": "r-42", …}
public struct PersistedRoster: Hashable, Sendable {
    public var etag: String?
    public var error: String?
    public var body: [UInt8]?

    public init(etag: String? = nil, error: String? = nil, body: [UInt8]? = nil) {
        self.etag = etag
        self.error = error
        self.body = body
    }

    static let magic = "beacon-gateway roster 1"
    public static let fileName = "roster.json"

    public func encode() -> [UInt8] {
        func line(_ key: String, _ value: String?) -> String {
            // One line each: a line break in a value would end the header early.
            var flat = ""
            for character in value ?? "" { flat.append(character == "\n" || character == "\r" ? " " : character) }
            return key + " " + flat + "\n"
        }
        var header = Self.magic + "\n"
        header += line("etag", etag)
        header += line("error", error)
        header += line("body", body == nil ? "no" : "yes")
        return Array((header + "\n").utf8) + (body ?? [])
    }

    /// nil when the file is not one of these (then it is ignored and rewritten).
    public init?(decoding bytes: [UInt8]) {
        var lines: [String] = []
        var position = 0
        while lines.count < 5 {
            guard let end = bytes[position...].firstIndex(of: 0x0A) else { return nil }
            guard let text = String(validating: bytes[position ..< end], as: UTF8.self) else { return nil }
            lines.append(text)
            position = end + 1
        }
        guard lines[0] == Self.magic, lines[4].isEmpty else { return nil }
        func value(_ line: String, _ key: String) -> String?? {
            guard line.hasPrefix(key + " ") else { return nil }
            let value = String(line.dropFirst(key.count + 1))
            return .some(value.isEmpty ? nil : value)
        }
        guard let etag = value(lines[1], "etag"), let error = value(lines[2], "error"),
              let hasBody = value(lines[3], "body"), hasBody == "yes" || hasBody == "no" else { return nil }
        self.etag = etag
        self.error = error
        body = hasBody == "yes" ? Array(bytes[position...]) : nil
        if hasBody == "no", position != bytes.count { return nil }
    }
}

/// The roster file in the state directory: written whole to a temporary file (mode 0600:
/// a roster may hold tag keys and IRKs), fsynced, renamed over the old one, and the
/// directory fsynced, so a power cut leaves the old roster or the new one, never half.
public enum RosterFile {
    public static func path(stateDirectory: String) -> String {
        (stateDirectory.hasSuffix("/") ? stateDirectory : stateDirectory + "/") + PersistedRoster.fileName
    }

    public static func write(_ roster: PersistedRoster, stateDirectory: String) throws(FleetFileError) {
        do throws(SystemCallFailure) {
            try AtomicFile.replace(path(stateDirectory: stateDirectory), with: roster.encode(), mode: 0o600, durability: .durable)
        } catch {
            throw FleetFileError(error.description)
        }
    }

    /// The persisted roster; nil when there is none. A file that cannot be read or is not
    /// a roster file is an error (logged; the agent starts without it).
    public static func read(stateDirectory: String, limit: Int) throws(FleetFileError) -> PersistedRoster? {
        let target = path(stateDirectory: stateDirectory)
        let fd = open(target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FleetFileError("cannot open \(target): \(Errno.current)")
        }
        defer { _ = close(fd) }
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try FileDescriptorIO.read(fd, upTo: limit + 4096 + 1)
        } catch {
            throw FleetFileError("cannot read \(target): \(error)")
        }
        guard bytes.count <= limit + 4096 else { throw FleetFileError("\(target) is larger than a roster can be") }
        guard let roster = PersistedRoster(decoding: bytes) else {
            throw FleetFileError("\(target) is not a roster file")
        }
        return roster
    }
}
