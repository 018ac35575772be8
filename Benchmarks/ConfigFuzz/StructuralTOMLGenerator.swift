import Config
import SplitMix

/// Generated TOML with hostile *structure*, not just mutated bytes: deep dotted keys, long
/// table headers, deep nesting of arrays and inline tables, huge arrays, long lines, many
/// tables, odd strings, and token soup from TOML's own punctuation. Sizes are mostly small
/// with a long tail up to the 1 MiB file limit, so a run meets both many shapes and the
/// extremes a crafted file would use.
public struct StructuralTOMLGenerator {
    private var random: SplitMix64

    public init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    private mutating func below(_ bound: Int) -> Int {
        Int(random.next() % UInt64(max(1, bound)))
    }

    private mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }

    /// A count with a long tail: usually small, sometimes at or past a limit, rarely huge.
    private mutating func count(typical: Int, limit: Int, huge: Int) -> Int {
        switch below(1_000) {
        case 0 ..< 740: return below(typical) + 1
        case 740 ..< 995: return limit - 2 + below(5)
        default: return below(huge) + 1
        }
    }

    private static let validPrefix = """
    [gateway]
    id = "door-1"

    """

    private mutating func bareKey() -> String {
        let keys = ["a", "gateway", "id", "person", "tag", "x_1", "k-2", "1", "true", "inf", "é", "person.tag"]
        return keys[below(keys.count)]
    }

    private mutating func keyPart() -> String {
        switch below(6) {
        case 0: return "\"\(bareKey()).q\""
        case 1: return "'\(bareKey())'"
        case 2: return "\"\""
        default: return bareKey()
        }
    }

    private mutating func dottedKey(parts: Int) -> String {
        var key = ""
        key.reserveCapacity(parts * 3)
        for index in 0 ..< parts {
            if index > 0 { key += chance(10) ? " . " : "." }
            key += keyPart()
        }
        return key
    }

    private mutating func scalar() -> String {
        let values = ["1", "-70", "0x1F", "1_000", "3.5", "inf", "nan", "-0.0", "true", "false", "\"text\"", "'lit'",
                      "\"\"\"multi\nline\"\"\"", "'''lit\nmulti'''", "1979-05-27T07:32:00Z", "07:32:00", "1979-05-27",
                      "\"esc \\u00e9 \\n \\\" \"", "\"\\uD800\"", "\"\\U0010FFFF\"", "1e400", "99999999999999999999"]
        return values[below(values.count)]
    }

    private mutating func nested(depth: Int, balanced: Bool) -> String {
        var open = ""
        var closing: [Character] = []
        open.reserveCapacity(depth * 3)
        closing.reserveCapacity(depth)
        for _ in 0 ..< depth {
            if chance(50) {
                open += "["
                closing.append("]")
            } else {
                open += "{a="
                closing.append("}")
            }
        }
        let kept = balanced ? closing.count : below(closing.count + 1)
        return open + scalar() + String(closing.reversed().prefix(kept))
    }

    private mutating func array(elements: Int) -> String {
        var text = "["
        text.reserveCapacity(elements * 3)
        let multiLine = chance(30)
        for index in 0 ..< elements {
            if index > 0 { text += multiLine ? ",\n" : "," }
            text += chance(90) ? "\(index % 100)" : scalar()
        }
        return text + (chance(20) ? ",]" : "]")
    }

    private mutating func tokenSoup(length: Int) -> String {
        let tokens = ["[", "]", "[[", "]]", "{", "}", "=", ".", ",", "\"", "'", "\"\"\"", "'''", "#", "\n", " ", "\\",
                      "a", "b.c", "1", "true", "\"s\"", "\r\n", "\t", "é", "\u{7F}", "\u{1}", "inf", "=[", "={"]
        var text = ""
        for _ in 0 ..< length { text += tokens[below(tokens.count)] }
        return text
    }

    /// One document; most start with a valid `[gateway]` so decoding runs past it too.
    /// A valid document with a few of the sections a real one has.
    private mutating func validDocument() -> String {
        var text = Self.validPrefix
        if chance(50) { text += "site = \"S_\(below(100))\"\ndoor = 'lab-\(below(400))'\n" }
        if chance(50) { text += "\n[presence]\nenter_rssi = -\(50 + below(20))\nexit_rssi = -\(75 + below(10))\nwindow_s = \(1 + below(9))\n" }
        for person in 0 ..< below(4) {
            text += "\n[[person]]\nid = \"u_\(person)\"\nname = \"\"\"P \(person)\"\"\"\n"
            text += "[[person.tag]]\nid = \"t\(person)\"\naddress = \"C0:11:22:33:44:\(10 + person)\"\n"
        }
        return text
    }

    public mutating func next() -> String {
        if chance(10) { return validDocument() }
        var text = chance(80) ? Self.validPrefix : ""
        for _ in 0 ..< 1 + below(3) {
            switch below(10) {
            case 0:
                text += dottedKey(parts: count(typical: 20, limit: TOMLInputLimits.maximumKeyParts, huge: 60_000)) + " = " + scalar() + "\n"
            case 1:
                let name = dottedKey(parts: count(typical: 20, limit: TOMLInputLimits.maximumKeyParts, huge: 40_000))
                text += (chance(50) ? "[[\(name)]]" : "[\(name)]") + "\n" + bareKey() + " = " + scalar() + "\n"
            case 2:
                text += bareKey() + " = " + nested(depth: count(typical: 20, limit: TOMLInputLimits.maximumNesting, huge: 100_000), balanced: chance(80)) + "\n"
            case 3:
                text += bareKey() + " = " + array(elements: count(typical: 100, limit: TOMLInputLimits.maximumArrayElements, huge: 150_000)) + "\n"
            case 4:
                let length = count(typical: 200, limit: TOMLInputLimits.maximumLineLength, huge: 900_000)
                text += bareKey() + " = \"" + String(repeating: "x", count: length) + "\"\n"
            case 5:
                for index in 0 ..< count(typical: 30, limit: 200, huge: 30_000) {
                    text += "[t\(index)]\nk = \(index)\n"
                }
            case 6:
                let quote = chance(50) ? "\"\"\"" : "'''"
                text += bareKey() + " = " + quote + String(repeating: chance(50) ? "\"" : "'", count: below(8)) + tokenSoup(length: below(20))
                    + String(repeating: quote, count: below(3)) + "\n"
            case 7:
                text += "[[person]]\nid = \"u_\(below(9))\"\n[[person.tag]]\nid = \"t\(below(9))\"\n"
                    + dottedKey(parts: below(4) + 1) + " = " + scalar() + "\n"
            case 8:
                text += bareKey() + " = {" + (0 ..< below(6)).map { _ in dottedKey(parts: below(3) + 1) + " = " + scalar() }.joined(separator: ", ") + "}\n"
            default:
                text += tokenSoup(length: count(typical: 60, limit: 200, huge: 20_000))
            }
        }
        return text
    }
}

