/// One entry in journald's native protocol: `NAME=value\n` per field, or for a value
/// with a newline the binary-safe form `NAME\n` + 64-bit little-endian length + bytes + `\n`
/// (systemd's "Native Journal Protocol").
public struct JournalEntry: Hashable, Sendable {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public static func == (lhs: JournalEntry, rhs: JournalEntry) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    /// Fields the entry itself sets; a log pair with one of these names is renamed, so a
    /// caller's `["message": …]` cannot replace the line.
    static let reservedNames: Set<String> = ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "MESSAGE_ID", "SYSLOG_FACILITY", "SYSLOG_PID"]

    /// Appends a field as given; `name` must already be a valid journal field name.
    public mutating func append(name: String, value: String) {
        fields.append((name, value))
    }

    /// Appends a key=value pair of a log line under its journal name (`person_id` →
    /// `PERSON_ID`); keys that make no valid name are dropped (they are still in MESSAGE).
    public mutating func appendLogField(key: String, value: String) {
        guard var name = JournalEntry.fieldName(forKey: key) else { return }
        if JournalEntry.reservedNames.contains(name) { name = "FIELD_" + name }
        fields.append((name, value))
    }

    /// Journal field names are `[A-Z0-9_]`, at most 64 characters, not starting with a
    /// digit or `_` (leading `_` marks fields only journald may set).
    public static func fieldName(forKey key: String) -> String? {
        var name = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "a" ... "z": name += String(scalar).uppercased()
            case "A" ... "Z", "0" ... "9": name.unicodeScalars.append(scalar)
            default: name.append("_")
            }
        }
        while name.hasPrefix("_") { name.removeFirst() }
        guard let first = name.unicodeScalars.first else { return nil }
        if ("0" ... "9").contains(first) { name = "F_" + name }
        return String(name.prefix(64))
    }

    /// The datagram.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        for (name, value) in fields {
            out.append(contentsOf: name.utf8)
            if value.utf8.contains(UInt8(ascii: "\n")) {
                out.append(UInt8(ascii: "\n"))
                var length = UInt64(value.utf8.count).littleEndian
                withUnsafeBytes(of: &length) { out.append(contentsOf: $0) }
                out.append(contentsOf: value.utf8)
            } else {
                out.append(UInt8(ascii: "="))
                out.append(contentsOf: value.utf8)
            }
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }
}
