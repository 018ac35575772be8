import HCI

/// A strict JSON (RFC 8259) reader into ``ConfigValue``s, for documents validated by the
/// configuration's own rules (a server roster, see docs/fleet.md). Bounded: nesting at
/// most ``maximumDepth`` deep, and the counts of ``Limits`` checked while reading, so a
/// hostile document is refused before its values are built (the caller bounds the size).
///
/// Numbers without a fraction or exponent that fit an `Int` are integers, others floats;
/// `null` is a value of type "null" (so "must be a string, got null"). A key twice in one
/// object is an error: which one would count is not something a server should guess.
enum JSONDocument {
    static let maximumDepth = 32

    /// Counts checked as the document is read. The first excess ends the parse, with the
    /// path of the value that exceeded (`persons[20000]`, `persons[3].tags[0].id`): what a
    /// document may hold is then bounded before any of it is decoded, whatever its shape.
    struct Limits: Sendable {
        /// An array the limits name by its path from the root; its elements count against
        /// `maximum` instead of `elements`.
        struct NamedArray: Sendable {
            enum Step: Hashable, Sendable {
                case key(String)
                case anyElement
            }

            var path: [Step]
            var maximum: Int
            /// Why the excess is refused: "a roster holds at most 20,000 persons".
            var message: String
            /// Elements of all the arrays at `path` together (every person's tags).
            var total: (maximum: Int, message: String)? = nil
        }

        /// Bytes of any string, keys included (before escapes are decoded).
        var stringBytes = Int.max
        /// Members of any object.
        var members = Int.max
        /// Elements of an array not in `named`.
        var elements = Int.max
        var named: [NamedArray] = []
        /// Values in the whole document, containers included.
        var values = Int.max
        var valuesMessage = "too many values"

        static let none = Limits()
    }

    /// A syntax error (at a byte offset), or an excess of the limits (at a path).
    struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Bytes from the start of the document.
        var offset: Int
        /// Where the limits were exceeded (nil for a syntax error).
        var path: ConfigPath?
        var message: String

        init(offset: Int, message: String) {
            self.offset = offset
            self.message = message
        }

        init(offset: Int, path: ConfigPath, message: String) {
            self.offset = offset
            self.path = path
            self.message = message
        }

        /// The path as a JSON document spells it (elements counted from 0).
        var pathText: String? { path.map(DocumentDialect.json.describe) }

        var description: String {
            if let pathText { return "\(pathText): \(message)" }
            return "JSON syntax error at byte \(offset): \(message)"
        }
    }

    static func parse(_ bytes: [UInt8], limits: Limits = .none) throws(ParseError) -> ConfigValue {
        var reader = Reader(bytes: bytes, limits: limits)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.position == bytes.count else { throw reader.error("unexpected data after the document") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0
        let limits: Limits
        /// Where the value being read sits: keys as written, elements counted from 1
        /// (``ConfigPath``'s way). Kept as the parse goes; only an excess reads it.
        var path: [ConfigPath.Component] = []
        var values = 0
        /// Elements read so far in the arrays of each of `limits.named`.
        var totals: [Int]

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
            totals = Array(repeating: 0, count: limits.named.count)
        }

        func error(_ message: String) -> ParseError {
            ParseError(offset: position, message: message)
        }

        func excess(_ message: String) -> ParseError {
            ParseError(offset: position, path: ConfigPath(components: path), message: message)
        }

        /// The limit of the array at `path`: a named one's (and its index), else `elements`.
        func arrayLimit() -> (maximum: Int, message: String, named: Int?) {
            for (index, named) in limits.named.enumerated() where named.path.count == path.count {
                let matches = zip(named.path, path).allSatisfy { step, component in
                    switch (step, component) {
                    case (.anyElement, .element): true
                    case let (.key(key), .literal(name)): key == name
                    default: false
                    }
                }
                if matches { return (named.maximum, named.message, index) }
            }
            return (limits.elements, "an array here holds at most \(limits.elements) elements", nil)
        }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        }

        mutating func value(depth: Int) throws(ParseError) -> ConfigValue {
            guard let byte = current else { throw error("a value was expected, the document ended") }
            values += 1
            guard values <= limits.values else { throw excess(limits.valuesMessage) }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .boolean(true)
            case UInt8(ascii: "f"): try literal("false"); return .boolean(false)
            case UInt8(ascii: "n"): try literal("null"); return .other(typeName: "null")
            case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"): return try number()
            default: throw error("a value was expected")
            }
        }

        mutating func literal(_ word: StaticString) throws(ParseError) {
            let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard bytes.count - position >= expected.count, bytes[position ..< position + expected.count].elementsEqual(expected)
            else { throw error("a value was expected") }
            position += expected.count
        }

        mutating func object(depth: Int) throws(ParseError) -> ConfigValue {
            guard depth <= JSONDocument.maximumDepth else { throw error("nested more than \(JSONDocument.maximumDepth) deep") }
            position += 1
            skipSpace()
            if current == UInt8(ascii: "}") {
                position += 1
                return .table([:])
            }
            // A roster's persons and tags have three keys or more: room for three at once
            // spares the two reallocations growing from one would take.
            var members = [String: ConfigValue](minimumCapacity: 3)
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw error("a key in double quotes was expected") }
                let keyOffset = position
                let key = try string()
                path.append(.literal(key))
                guard members.count < limits.members else {
                    throw excess("an object holds at most \(limits.members) keys")
                }
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw error("':' was expected after a key") }
                position += 1
                skipSpace()
                let member = try value(depth: depth)
                path.removeLast()
                guard members.updateValue(member, forKey: key) == nil else {
                    throw ParseError(offset: keyOffset, message: "the key \(quoted(key)) appears twice in one object")
                }
                skipSpace()
                switch current {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"): position += 1; return .table(members)
                default: throw error("',' or '}' was expected")
                }
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> ConfigValue {
            guard depth <= JSONDocument.maximumDepth else { throw error("nested more than \(JSONDocument.maximumDepth) deep") }
            position += 1
            var elements: [ConfigValue] = []
            skipSpace()
            if current == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            let limit = arrayLimit()
            path.append(.element(1))
            while true {
                skipSpace()
                path[path.count - 1] = .element(elements.count + 1)
                guard elements.count < limit.maximum else { throw excess(limit.message) }
                if let named = limit.named, let total = limits.named[named].total {
                    totals[named] += 1
                    guard totals[named] <= total.maximum else { throw excess(total.message) }
                }
                elements.append(try value(depth: depth))
                skipSpace()
                switch current {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    path.removeLast()
                    return .array(elements)
                default: throw error("',' or ']' was expected")
                }
            }
        }

        mutating func string() throws(ParseError) -> String {
            position += 1
            let start = position
            // The common case, no escapes: one copy straight from the document.
            var ascii = true
            // Past the limit the string is refused unread: a 4 MiB string is not built.
            let end = bytes.count - start > limits.stringBytes ? start + limits.stringBytes + 1 : bytes.count
            while position < end {
                let byte = bytes[position]
                guard byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 else { break }
                if byte >= 0x80 { ascii = false }
                position += 1
            }
            guard position - start <= limits.stringBytes else { throw longString() }
            if current == UInt8(ascii: "\"") {
                let end = position
                position += 1
                // ASCII is valid UTF-8 as it stands: decoding it is a plain copy, while
                // `String(validating:)` goes through generic code (a tenth of a roster's parse).
                if ascii {
                    return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start ..< end]), as: UTF8.self) }
                }
                guard let text = String(validating: bytes[start ..< end], as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                return text
            }
            var scalars = Array(bytes[start ..< position])
            while true {
                guard let byte = current else { throw error("a string is not closed") }
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard let text = String(validating: scalars, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                    return text
                case UInt8(ascii: "\\"):
                    position += 1
                    try escape(into: &scalars)
                case ..<0x20:
                    throw error("a control character must be escaped in a string")
                default:
                    scalars.append(byte)
                    position += 1
                }
                guard position - start <= limits.stringBytes else { throw longString() }
            }
        }

        /// A string over the limit; a key's path is its object's.
        func longString() -> ParseError {
            excess("a string holds at most \(limits.stringBytes) bytes")
        }

        mutating func escape(into out: inout [UInt8]) throws(ParseError) {
            guard let byte = current else { throw error("a string is not closed") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800 ..< 0xDC00).contains(code) {
                    guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
                    else { throw error("a lone surrogate in \\u escape") }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00 ..< 0xE000).contains(low) else { throw error("a lone surrogate in \\u escape") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00 ..< 0xE000).contains(code) {
                    throw error("a lone surrogate in \\u escape")
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("an invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw error("an invalid escape in a string")
            }
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard bytes.count - position >= 4 else { throw error("\\u needs four hex digits") }
            var code: UInt32 = 0
            for _ in 0 ..< 4 {
                guard let digit = HexText.digit(bytes[position]) else { throw error("\\u needs four hex digits") }
                code = code << 4 | UInt32(digit)
                position += 1
            }
            return code
        }

        mutating func number() throws(ParseError) -> ConfigValue {
            let start = position
            if current == UInt8(ascii: "-") { position += 1 }
            guard let first = current, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(first) else { throw error("a digit was expected") }
            if first == UInt8(ascii: "0") {
                position += 1
            } else {
                skipDigits()
            }
            var integral = true
            if current == UInt8(ascii: ".") {
                integral = false
                position += 1
                guard requireDigits() else { throw error("a digit was expected after '.'") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                integral = false
                position += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
                guard requireDigits() else { throw error("a digit was expected in the exponent") }
            }
            let text = String(decoding: bytes[start ..< position], as: UTF8.self)
            if integral, let integer = Int(text) { return .integer(integer) }
            guard let double = Double(text), double.isFinite else { throw ParseError(offset: start, message: "a number out of range") }
            return .float(double)
        }

        mutating func skipDigits() {
            while let byte = current, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) { position += 1 }
        }

        mutating func requireDigits() -> Bool {
            let start = position
            skipDigits()
            return position > start
        }
    }
}
