/// The bytes of a TOML text under a cursor: lines counted (and their length bounded),
/// blanks, comments, keys and strings. Every access is bounds-checked; every loop moves
/// forward, so a text is read once, in linear time.
struct TOMLScanner {
    let bytes: [UInt8]
    private(set) var position = 0
    private(set) var line = 1
    private var lineStart = 0
    /// The key last read, as written (blanks dropped, shortened): named by limit errors about
    /// what follows it.
    private(set) var lastKey = ""

    init(bytes: [UInt8]) {
        self.bytes = bytes
        // A byte order mark is not content.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            position = 3
            lineStart = 3
        }
    }

    var isAtEnd: Bool { position >= bytes.count }

    func peek(_ offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    func syntaxError(_ message: String, line: Int? = nil) -> TOMLSyntaxError {
        TOMLSyntaxError(kind: .syntax, line: line ?? self.line, key: "", message: message)
    }

    func limitError(_ message: String, key: String? = nil) -> TOMLSyntaxError {
        TOMLSyntaxError(kind: .inputLimit, line: line, key: key ?? lastKey, message: message)
    }

    /// Past one byte that is not a line feed (those go through ``newline()``).
    mutating func skip(_ count: Int = 1) {
        position = min(position + count, bytes.count)
    }

    /// Whether a newline (`\n` or `\r\n`) starts here.
    var atNewline: Bool {
        peek() == UInt8(ascii: "\n") || (peek() == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n"))
    }

    /// Past a newline, ending a line whose length is then checked.
    mutating func newline() throws(TOMLSyntaxError) {
        if peek() == UInt8(ascii: "\r") { skip() }
        try checkLineLength(endingAt: position)
        position += 1
        line += 1
        lineStart = position
    }

    /// The last line has no newline to check it: the parser calls this at the end.
    func checkLastLine() throws(TOMLSyntaxError) {
        try checkLineLength(endingAt: bytes.count)
    }

    private func checkLineLength(endingAt end: Int) throws(TOMLSyntaxError) {
        if end - lineStart > TOMLInputLimits.maximumLineLength {
            throw limitError("line is \(end - lineStart) bytes long; at most \(TOMLInputLimits.maximumLineLength) are allowed")
        }
    }

    /// Spaces and tabs.
    mutating func skipBlanks() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { position += 1 }
    }

    /// A `#` comment up to (not including) its newline, if one starts here.
    mutating func skipComment() throws(TOMLSyntaxError) {
        guard peek() == UInt8(ascii: "#") else { return }
        position += 1
        while let byte = peek(), !atNewline {
            if Self.isControl(byte) { throw syntaxError("a comment holds a control character (U+\(hex(byte)))") }
            position += 1
        }
    }

    /// Blanks, comments and newlines: between statements and between array elements.
    mutating func skipBlanksCommentsAndNewlines() throws(TOMLSyntaxError) {
        while true {
            skipBlanks()
            try skipComment()
            guard atNewline else { return }
            try newline()
        }
    }

    /// TOML refuses these unescaped in strings and comments (tab is allowed).
    static func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F
    }

    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
             UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// Whether a key (bare or quoted) can start here.
    var atKeyStart: Bool {
        guard let byte = peek() else { return false }
        return Self.isBareKeyByte(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }

    // MARK: Keys

    /// `a.b."c d".'e'`, its parts unescaped; at most ``TOMLInputLimits/maximumKeyParts``.
    mutating func dottedKey() throws(TOMLSyntaxError) -> [String] {
        let start = position
        var parts = [String]()
        while true {
            skipBlanks()
            parts.append(try simpleKey())
            skipBlanks()
            guard peek() == UInt8(ascii: ".") else { break }
            if parts.count == TOMLInputLimits.maximumKeyParts {
                throw limitError("key has more than \(TOMLInputLimits.maximumKeyParts) dotted parts", key: writtenKey(from: start) + "…")
            }
            position += 1
        }
        let written = writtenKey(from: start)
        lastKey = written.utf8.count >= 64 ? written + "…" : written
        return parts
    }

    /// The key's text as written from `start`, blanks dropped, at most 64 bytes.
    private func writtenKey(from start: Int) -> String {
        var text = [UInt8]()
        for byte in bytes[start ..< position] where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
            guard text.count < 64 else { break }
            text.append(byte)
        }
        // A cut through a multi-byte character decodes to U+FFFD: still bounded text.
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func simpleKey() throws(TOMLSyntaxError) -> String {
        guard let byte = peek() else { throw syntaxError("expected a key at the end of the file") }
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
            if peek(1) == byte, peek(2) == byte { throw syntaxError("a key cannot be a multi-line string") }
            return try string()
        }
        let start = position
        while let next = peek(), Self.isBareKeyByte(next) { position += 1 }
        guard position > start else {
            throw syntaxError("expected a key (letters, digits, '_' and '-', or a quoted string), found \(describe())")
        }
        return String(decoding: bytes[start ..< position], as: UTF8.self)
    }

    // MARK: Strings

    /// A basic or literal string, single- or multi-line, starting at its quote.
    mutating func string() throws(TOMLSyntaxError) -> String {
        let quote = bytes[position]
        let escapes = quote == UInt8(ascii: "\"")
        let multiLine = peek(1) == quote && peek(2) == quote
        let startLine = line
        var content = [UInt8]()
        if multiLine {
            position += 3
            // A newline right after the opening quotes is not content.
            if atNewline { try newline() }
        } else {
            position += 1
        }
        while true {
            guard let byte = peek() else {
                throw syntaxError("the string started on line \(startLine) is not closed", line: startLine)
            }
            if byte == quote {
                guard multiLine else {
                    position += 1
                    break
                }
                var run = 0
                while peek(run) == quote { run += 1 }
                if run >= 3 {
                    // Up to two quotes before the closing three are content: `""""` ends in `"`.
                    guard run <= 5 else { throw syntaxError("too many quotes in a row in a multi-line string") }
                    content.append(contentsOf: repeatElement(quote, count: run - 3))
                    position += run
                    break
                }
                content.append(contentsOf: repeatElement(quote, count: run))
                position += run
            } else if atNewline {
                guard multiLine else {
                    throw syntaxError("the string is not closed on its line (a multi-line string needs \(escapes ? "\"\"\"" : "'''"))")
                }
                if byte == UInt8(ascii: "\r") { content.append(byte) }
                content.append(UInt8(ascii: "\n"))
                try newline()
            } else if byte == UInt8(ascii: "\\"), escapes {
                try escape(into: &content, multiLine: multiLine)
            } else if Self.isControl(byte) {
                throw syntaxError("a string holds a control character (U+\(hex(byte))); write it as an escape")
            } else {
                content.append(byte)
                position += 1
            }
        }
        return String(decoding: content, as: UTF8.self)
    }

    private mutating func escape(into content: inout [UInt8], multiLine: Bool) throws(TOMLSyntaxError) {
        position += 1
        guard let byte = peek() else { throw syntaxError("the string ends in a lone '\\'") }
        position += 1
        if multiLine, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
            // A line-ending backslash: the newline and all blanks after it are dropped.
            position -= 1
            skipBlanks()
            guard atNewline else { throw syntaxError("a '\\' followed by blanks must end its line") }
            while true {
                skipBlanks()
                guard atNewline else { return }
                try newline()
            }
        }
        switch byte {
        case UInt8(ascii: "b"): content.append(0x08)
        case UInt8(ascii: "t"): content.append(0x09)
        case UInt8(ascii: "n"): content.append(0x0A)
        case UInt8(ascii: "f"): content.append(0x0C)
        case UInt8(ascii: "r"): content.append(0x0D)
        case UInt8(ascii: "\""): content.append(byte)
        case UInt8(ascii: "\\"): content.append(byte)
        case UInt8(ascii: "u"): try unicodeEscape(digits: 4, into: &content)
        case UInt8(ascii: "U"): try unicodeEscape(digits: 8, into: &content)
        default:
            throw syntaxError("unknown escape '\\\(describeRaw(at: position - 1))' (TOML has \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)")
        }
    }

    private mutating func unicodeEscape(digits: Int, into content: inout [UInt8]) throws(TOMLSyntaxError) {
        var value: UInt32 = 0
        for _ in 0 ..< digits {
            guard let byte = peek(), let digit = Self.hexValue(byte) else {
                throw syntaxError("\\\(digits == 4 ? "u" : "U") needs exactly \(digits) hexadecimal digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw syntaxError("\\\(digits == 4 ? "u" : "U")\(String(value, radix: 16, uppercase: true)) is not a Unicode scalar value")
        }
        content.append(contentsOf: String(Character(scalar)).utf8)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Messages

    /// The byte `offset` ahead (or the character it starts) for a message: `'x'`, or
    /// `the end of the line`.
    func describe(at offset: Int = 0) -> String {
        guard let byte = peek(offset) else { return "the end of the file" }
        if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && peek(offset + 1) == UInt8(ascii: "\n")) { return "the end of the line" }
        return "'\(describeRaw(at: position + offset))'"
    }

    private func describeRaw(at index: Int) -> String {
        let byte = bytes[index]
        if byte < 0x80 {
            return Self.isControl(byte) ? "U+\(hex(byte))" : String(decoding: [byte], as: UTF8.self)
        }
        // The whole character this byte starts (the text is valid UTF-8).
        var end = index + 1
        while end < bytes.count, end - index < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[index ..< end], as: UTF8.self)
    }
}

/// `0041` for `A`: how control characters are named in messages.
func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - digits.count) + digits
}
