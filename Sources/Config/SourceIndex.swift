/// The line of every table header and `key =` of a TOML document.
///
/// TOMLKit's values carry no source positions, so this light scanner walks the text once
/// more. It runs only on text the TOML parser has accepted, which keeps it simple; on
/// anything it does not understand it moves on rather than failing, because a missing
/// position only makes a message less precise (see ``line(of:)``).
struct SourceIndex: Sendable {
    private var lines: [ConfigPath: Int] = [:]

    /// The first construct toml++ 3.4 asserts on instead of reporting it (an abort in debug
    /// builds, undefined behaviour in release builds), so it must be refused before the text
    /// reaches the parser: a table header whose name does not start with a key character
    /// (`[=]`, `[ [a]]`, `[é]`), or a closing bracket that does not match the open one
    /// (`a = [}`).
    private(set) var parserHazard: (line: Int, message: String)?

    /// The line where `path` is written, else where its nearest written ancestor is (keys
    /// inside inline tables, missing keys of a table), else 0.
    func line(of path: ConfigPath) -> Int {
        var current: ConfigPath? = path
        while let candidate = current {
            if let line = lines[candidate] { return line }
            current = candidate.parent
        }
        return 0
    }

    init(text: String) {
        self.init(text: text, recordingLines: true)
    }

    /// Only the ``parserHazard`` check: the same walk without remembering any line, for
    /// every document before it reaches the parser.
    static func parserHazard(in text: String) -> (line: Int, message: String)? {
        SourceIndex(text: text, recordingLines: false).parserHazard
    }

    private init(text: String, recordingLines: Bool) {
        var scanner = Scanner(bytes: Array(text.utf8))
        // The path of the table the following keys belong to.
        var table = ConfigPath.root
        // How many elements each array of tables (by resolved path) has had so far, so that
        // `[[person.tag]]` lands in the latest `[[person]]`.
        var arrayCounts: [ConfigPath: Int] = [:]

        func record(_ path: ConfigPath, line: Int) {
            if recordingLines, lines[path] == nil { lines[path] = line }
        }

        func resolve(_ keys: [String], appendingElement: Bool) -> ConfigPath {
            var path = ConfigPath.root
            for (offset, key) in keys.enumerated() {
                path = path.appending(key)
                let isLast = offset == keys.count - 1
                if isLast, appendingElement {
                    let count = (arrayCounts[path] ?? 0) + 1
                    arrayCounts[path] = count
                    record(path, line: scanner.line)
                    path = path.appending(element: count)
                } else if let count = arrayCounts[path] {
                    path = path.appending(element: count)
                }
                record(path, line: scanner.line)
            }
            return path
        }

        while !scanner.isAtEnd {
            let start = scanner.position
            scanner.skipBlankLinesAndComments()
            guard let byte = scanner.peek() else { break }
            if byte == UInt8(ascii: "[") {
                scanner.advance()
                let isArray = scanner.peek() == UInt8(ascii: "[")
                if isArray { scanner.advance() }
                scanner.skipSpaces()
                if parserHazard == nil, !scanner.atKeyStartOrHeaderEnd {
                    parserHazard = (scanner.line, "a table header needs a name after '[', e.g. [presence] or [[person]]")
                }
                let keys = scanner.dottedKey()
                if recordingLines { table = resolve(keys, appendingElement: isArray) }
                scanner.skipRestOfLine()
            } else {
                let keys = scanner.dottedKey()
                if recordingLines {
                    var path = table
                    for key in keys {
                        path = path.appending(key)
                        record(path, line: scanner.line)
                    }
                }
                if scanner.peek() == UInt8(ascii: "=") {
                    scanner.advance()
                    if let line = scanner.skipValue(), parserHazard == nil {
                        parserHazard = (line, "unbalanced brackets: a ']' or '}' does not match the '[' or '{' it closes")
                    }
                } else {
                    scanner.skipRestOfLine()
                }
            }
            // Always make progress, whatever the input.
            if scanner.position == start { scanner.advance() }
        }
    }
}

/// A cursor over UTF-8 bytes that counts lines. Every access is bounds-checked.
private struct Scanner {
    let bytes: [UInt8]
    private(set) var position = 0
    private(set) var line = 1

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position >= bytes.count }

    func peek(_ offset: Int = 0) -> UInt8? {
        let index = position + offset
        return index < bytes.count ? bytes[index] : nil
    }

    mutating func advance() {
        guard position < bytes.count else { return }
        if bytes[position] == UInt8(ascii: "\n") { line += 1 }
        position += 1
    }

    func starts(with literal: String) -> Bool {
        var offset = 0
        for byte in literal.utf8 {
            guard peek(offset) == byte else { return false }
            offset += 1
        }
        return true
    }

    /// What toml++ requires after `[`, `[[` and spaces: a bare key character, a quote,
    /// or the `]` it reports as an empty name.
    var atKeyStartOrHeaderEnd: Bool {
        guard let byte = peek() else { return true }
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
             UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"),
             UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "]"): return true
        default: return false
        }
    }

    mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { advance() }
    }

    mutating func skipBlankLinesAndComments() {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): advance()
            case UInt8(ascii: "#"): skipRestOfLine()
            default: return
            }
        }
    }

    /// Up to and including the next newline.
    mutating func skipRestOfLine() {
        while let byte = peek() {
            advance()
            if byte == UInt8(ascii: "\n") { return }
        }
    }

    /// `a.b."c d".'e'`, stopping before `=`, `]` or the end of the line.
    mutating func dottedKey() -> [String] {
        var keys = [String]()
        while true {
            skipSpaces()
            guard let byte = peek() else { return keys }
            switch byte {
            case UInt8(ascii: "\""): keys.append(quotedKey(escapes: true))
            case UInt8(ascii: "'"): keys.append(quotedKey(escapes: false))
            default:
                var key = [UInt8]()
                while let byte = peek(), ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "."),
                                           UInt8(ascii: "="), UInt8(ascii: "]"), UInt8(ascii: "\n"),
                                           UInt8(ascii: "\r"), UInt8(ascii: "#")].contains(byte) {
                    key.append(byte)
                    advance()
                }
                if key.isEmpty { return keys }
                keys.append(String(decoding: key, as: UTF8.self))
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return keys }
            advance()
        }
    }

    /// A quoted key; escapes other than `\"` and `\\` are kept as written, which only
    /// matters for keys no valid configuration has.
    private mutating func quotedKey(escapes: Bool) -> String {
        guard let quote = peek() else { return "" }
        advance()
        var key = [UInt8]()
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            advance()
            if byte == quote { break }
            if escapes, byte == UInt8(ascii: "\\"), let next = peek(), next != UInt8(ascii: "\n") {
                advance()
                if next != quote, next != UInt8(ascii: "\\") { key.append(byte) }
                key.append(next)
                continue
            }
            key.append(byte)
        }
        return String(decoding: key, as: UTF8.self)
    }

    /// A value after `=`, through the end of its last line: strings (multi-line ones too),
    /// arrays and inline tables may span lines. Returns the line of the first closing
    /// bracket that does not match its opening one, if any.
    mutating func skipValue() -> Int? {
        var open = [UInt8]()
        var mismatch: Int?
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "\n"):
                advance()
                if open.isEmpty { return mismatch }
            case UInt8(ascii: "#"):
                while let next = peek(), next != UInt8(ascii: "\n") { advance() }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                open.append(byte)
                advance()
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                let opener = byte == UInt8(ascii: "]") ? UInt8(ascii: "[") : UInt8(ascii: "{")
                if open.last != opener, mismatch == nil { mismatch = line }
                if !open.isEmpty { open.removeLast() }
                advance()
            case UInt8(ascii: "\""):
                if starts(with: "\"\"\"") { skipMultiLineString(quote: byte, escapes: true) } else { skipString(quote: byte, escapes: true) }
            case UInt8(ascii: "'"):
                if starts(with: "'''") { skipMultiLineString(quote: byte, escapes: false) } else { skipString(quote: byte, escapes: false) }
            default:
                advance()
            }
        }
        return mismatch
    }

    private mutating func skipString(quote: UInt8, escapes: Bool) {
        advance()
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            advance()
            if byte == quote { return }
            if escapes, byte == UInt8(ascii: "\\"), peek() != UInt8(ascii: "\n") { advance() }
        }
    }

    private mutating func skipMultiLineString(quote: UInt8, escapes: Bool) {
        advance(); advance(); advance()
        while let byte = peek() {
            if byte == quote, peek(1) == quote, peek(2) == quote {
                advance(); advance(); advance()
                // Up to two more quotes may belong to the content: `""""" ` ends `""`.
                if peek() == quote { advance() }
                if peek() == quote { advance() }
                return
            }
            advance()
            if escapes, byte == UInt8(ascii: "\\") { advance() }
        }
    }
}
