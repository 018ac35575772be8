/// A minimal JSON writer for the line formats the gateway prints, laid out as docs/cli.md
/// shows them (`{"key": value, "key": value}`).
///
/// Hand-rolled rather than Foundation's JSONEncoder, which would pull Foundation (and ICU)
/// into the static binary and does not promise key order.
public struct JSONWriter: Sendable {
    public private(set) var text = ""
    /// Per open container: whether a member was already written (so a separator is due).
    private var hasMembers: [Bool] = []
    private var afterKey = false

    public init() {}

    public mutating func beginObject() {
        separate()
        text += "{"
        hasMembers.append(false)
    }

    public mutating func endObject() {
        text += "}"
        hasMembers.removeLast()
    }

    public mutating func beginArray() {
        separate()
        text += "["
        hasMembers.append(false)
    }

    public mutating func endArray() {
        text += "]"
        hasMembers.removeLast()
    }

    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        text += ": "
        afterKey = true
    }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }

    public mutating func number(_ value: Int) {
        separate()
        text += String(value)
    }

    /// A number with exactly one decimal (`9.6`); non-finite values become null, which
    /// JSON can carry and `NaN` it cannot.
    public mutating func number(_ value: Double, fractionDigits: Int = 1) {
        separate()
        text += Self.format(value, fractionDigits: fractionDigits) ?? "null"
    }

    public mutating func bool(_ value: Bool) {
        separate()
        text += value ? "true" : "false"
    }

    public mutating func null() {
        separate()
        text += "null"
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func number(_ value: Int?) {
        if let value { number(value) } else { null() }
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasMembers.last else { return }
        if last { text += ", " }
        hasMembers[hasMembers.count - 1] = true
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Quotes and escapes: `"`, `\` and every control character (names are untrusted
    /// bytes); everything else is written as is, since the output is UTF-8.
    private mutating func appendQuoted(_ value: String) {
        var utf8: [UInt8] = [UInt8(ascii: "\"")]
        utf8.reserveCapacity(value.utf8.count + 2)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): utf8 += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): utf8 += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: utf8 += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: utf8 += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: utf8 += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00 ..< 0x20, 0x7F:
                utf8 += Array("\\u00".utf8) + [Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0x0F)]]
            default: utf8.append(byte)
            }
        }
        utf8.append(UInt8(ascii: "\""))
        text += String(decoding: utf8, as: UTF8.self)
    }

    /// Fixed-point decimal text without Foundation's formatters, rounding half away from
    /// zero; nil when not finite or too large to be meaningful.
    public static func format(_ value: Double, fractionDigits: Int) -> String? {
        let digits = min(max(fractionDigits, 0), 6)
        var scale: Int64 = 1
        for _ in 0 ..< digits { scale *= 10 }
        let scaled = (value * Double(scale)).rounded(.toNearestOrAwayFromZero)
        guard scaled.isFinite, abs(scaled) < 9e15 else { return nil }
        let units = Int64(scaled)
        let whole = String(units.magnitude / UInt64(scale))
        let sign = units < 0 ? "-" : ""
        guard digits > 0 else { return sign + whole }
        var fraction = String(units.magnitude % UInt64(scale))
        while fraction.count < digits { fraction = "0" + fraction }
        return sign + whole + "." + fraction
    }
}
