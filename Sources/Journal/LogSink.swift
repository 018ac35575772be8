#if canImport(Glibc)
import Glibc
#endif

/// Severity of a log line, ordered; raw values are syslog priorities (sd-daemon prefixes).
public enum Severity: Int32, Comparable, CaseIterable, Sendable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue > rhs.rawValue }

    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }
}

/// Where log lines go.
public enum LogDestination: Sendable {
    /// Standard error with a UTC timestamp and the level name: a person at a terminal.
    case terminal
    /// Standard error with sd-daemon priority prefixes (`<6>`): journald reads the stream.
    case journalStream
    /// journald's native protocol (structured fields such as PERSON_ID, EVENT, TAG); a
    /// datagram that cannot be sent goes to standard error with a prefix instead.
    case journalSocket(UnixDatagramSender)
}

/// One line per notable happening, `message key=value …` (see docs/logs-and-systemd.md).
///
/// Under systemd (JOURNAL_STREAM names our stderr) each line starts with an sd-daemon
/// priority prefix (`<6>`) and no timestamp, since the journal adds its own; on a
/// terminal lines carry a UTC timestamp and the level name. `automatic` goes one step
/// further under systemd and uses the native journal protocol, so each key=value pair is
/// also a journal field (`journalctl PERSON_ID=u_1001`).
///
/// Values of keys that name secrets (`key`, `token`, `irk`, `master_key`, …; see
/// `LogRedaction`) are replaced by `***` on every destination.
public struct LogSink: Sendable {
    public var minimumLevel: Severity
    public let journalPrefixes: Bool
    public let destination: LogDestination

    /// `SYSLOG_IDENTIFIER=` of native entries.
    public static let identifier = "beacon-gateway"
    /// journald's socket for native entries.
    public static let journalSocketPath = "/run/systemd/journal/socket"

    public init(minimumLevel: Severity = .info, journalPrefixes: Bool = LogSink.stderrIsJournal()) {
        self.minimumLevel = minimumLevel
        self.journalPrefixes = journalPrefixes
        destination = journalPrefixes ? .journalStream : .terminal
    }

    public init(minimumLevel: Severity = .info, destination: LogDestination) {
        self.minimumLevel = minimumLevel
        self.destination = destination
        switch destination {
        case .terminal: journalPrefixes = false
        case .journalStream, .journalSocket: journalPrefixes = true
        }
    }

    /// The native journal protocol when JOURNAL_STREAM names our stderr and journald's
    /// socket is there (we run under systemd); prefixed stderr if the socket is not; the
    /// terminal format otherwise.
    public static func automatic(minimumLevel: Severity = .info, journalSocketPath: String = LogSink.journalSocketPath) -> LogSink {
        guard stderrIsJournal() else { return LogSink(minimumLevel: minimumLevel, destination: .terminal) }
        if access(journalSocketPath, W_OK) == 0, let socket = try? UnixDatagramSender(address: journalSocketPath) {
            return LogSink(minimumLevel: minimumLevel, destination: .journalSocket(socket))
        }
        return LogSink(minimumLevel: minimumLevel, destination: .journalStream)
    }

    public func log(_ level: Severity, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= minimumLevel else { return }
        let text = LogSink.render(message, fields)
        switch destination {
        case .terminal:
            printError("\(LogSink.utcTimestamp()) \(level.name) \(text)")
        case .journalStream:
            printError("<\(level.rawValue)>\(text)")
        case .journalSocket(let socket):
            let entry = LogSink.journalEntry(level, text: text, fields)
            do {
                try socket.send(entry.encoded)
            } catch {
                printError("<\(level.rawValue)>\(text)")
            }
        }
    }

    /// `message key=value …` with values quoted where needed and secrets masked.
    public static func render(_ message: String, _ fields: KeyValuePairs<String, String>) -> String {
        var line = message
        for (key, value) in fields {
            line += " \(key)=\(quoted(LogRedaction.value(value, forKey: key)))"
        }
        return line
    }

    /// The native entry for a line: MESSAGE (the rendered line), PRIORITY,
    /// SYSLOG_IDENTIFIER, then one field per pair (secrets masked there too).
    public static func journalEntry(_ level: Severity, text: String, _ fields: KeyValuePairs<String, String>) -> JournalEntry {
        var entry = JournalEntry()
        entry.append(name: "MESSAGE", value: text)
        entry.append(name: "PRIORITY", value: "\(level.rawValue)")
        entry.append(name: "SYSLOG_IDENTIFIER", value: identifier)
        for (key, value) in fields {
            entry.appendLogField(key: key, value: LogRedaction.value(value, forKey: key))
        }
        return entry
    }

    /// Values with spaces, quotes or control characters are quoted, so a line always
    /// splits back into the same fields (names in advertisements are untrusted).
    public static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 || $0.value == 0x7F }
        guard needsQuotes else { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// JOURNAL_STREAM is "DEVICE:INODE" of the stream systemd connected; it only counts
    /// when it is still our stderr (a child of a service may have been redirected).
    public static func stderrIsJournal() -> Bool {
        guard let raw = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: raw).split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// `2026-11-22T04:35:12.345Z`
    public static func utcTimestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var seconds = ts.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let millis = Int(ts.tv_nsec / 1_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}
