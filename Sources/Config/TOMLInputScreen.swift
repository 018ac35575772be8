/// Bounds on the shape of a configuration file, checked in one linear pass over its bytes
/// before toml++ sees them.
///
/// toml++ recurses and searches in ways crafted input turns against it: a dotted key of
/// 50,000 parts overflows its stack, a table header of 40,000 parts takes minutes. The
/// same parse runs on every SIGHUP, so such a file must be refused with a clear error
/// instead of killing or stalling the running agent. A real configuration is far inside
/// every limit (docs/configuration.md lists them; so does config/gateway.example.toml).
public enum TOMLInputLimits {
    /// Bytes in one line (a 2,000-person file's longest line is under 200).
    public static let maximumLineLength = 4_096
    /// Parts of one dotted key or table header: `person.tag` is 2.
    public static let maximumKeyParts = 16
    /// Arrays and inline tables inside each other.
    public static let maximumNesting = 16
    /// Elements of one array written inline (arrays of tables, `[[person]]`, do not count).
    public static let maximumArrayElements = 4_096
}

/// Where the text breaks a ``TOMLInputLimits`` bound.
struct TOMLInputViolation: Error, Hashable {
    var line: Int
    /// The dotted key being written there, shortened; empty when none.
    var key: String
    var message: String
}

/// A lexical walk that knows just enough TOML to measure: strings (four kinds, escapes),
/// comments, keys (bare, quoted, dotted), headers, arrays and inline tables. It never
/// judges validity (toml++ does that); it only refuses sizes and depths.
struct TOMLInputScreen {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1
    private var lineStart = 0

    /// What encloses the current position: an array (with its element count) or an inline table.
    private enum Container {
        case array(elements: Int)
        case inlineTable
    }

    private var containers: [Container] = []
    /// Whether the next token is a key (line start outside values, or after `{` / `,` in an
    /// inline table).
    private var expectingKey = true
    /// The key being read: its parts so far and a short rendering for messages.
    private var keyParts = 0
    private var keyText: [UInt8] = []
    /// The last complete key, named in errors about the value that follows it.
    private var lastKey = ""

    static func check(_ bytes: [UInt8]) throws(TOMLInputViolation) {
        var screen = TOMLInputScreen(bytes: bytes)
        try screen.run()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    private func violation(_ message: String, key: String? = nil) -> TOMLInputViolation {
        TOMLInputViolation(line: line, key: key ?? lastKey, message: message)
    }

    /// Moves past one byte, counting lines and checking their length.
    private mutating func advance() throws(TOMLInputViolation) {
        if bytes[position] == UInt8(ascii: "\n") {
            try checkLineLength(endingAt: position)
            line += 1
            lineStart = position + 1
        }
        position += 1
    }

    private func checkLineLength(endingAt end: Int) throws(TOMLInputViolation) {
        if end - lineStart > TOMLInputLimits.maximumLineLength {
            throw violation("line is \(end - lineStart) bytes long; at most \(TOMLInputLimits.maximumLineLength) are allowed")
        }
    }

    private mutating func run() throws(TOMLInputViolation) {
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\n"):
                if containers.isEmpty { expectingKey = true }
                try advance()
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                try advance()
            case UInt8(ascii: "#"):
                while let next = peek(), next != UInt8(ascii: "\n") { try advance() }
            case UInt8(ascii: "["):
                if containers.isEmpty, expectingKey {
                    try header()
                } else {
                    try open(.array(elements: 0))
                }
            case UInt8(ascii: "{"):
                try open(.inlineTable)
                expectingKey = true
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if !containers.isEmpty { containers.removeLast() }
                try advance()
            case UInt8(ascii: ","):
                try comma()
            case UInt8(ascii: "="):
                expectingKey = false
                try advance()
            default:
                if expectingKey {
                    try key()
                } else {
                    try value()
                }
            }
        }
        try checkLineLength(endingAt: bytes.count)
    }

    private mutating func open(_ container: Container) throws(TOMLInputViolation) {
        // A new array is one more element of the array around it.
        if case .array = container { try countElement() }
        guard containers.count < TOMLInputLimits.maximumNesting else {
            throw violation("arrays and inline tables are nested more than \(TOMLInputLimits.maximumNesting) deep")
        }
        containers.append(container)
        try advance()
    }

    private mutating func comma() throws(TOMLInputViolation) {
        if case .inlineTable? = containers.last { expectingKey = true }
        try advance()
    }

    /// Counts one element of the innermost array when a value starts inside it.
    private mutating func countElement() throws(TOMLInputViolation) {
        guard case let .array(elements)? = containers.last else { return }
        guard elements < TOMLInputLimits.maximumArrayElements else {
            throw violation("array has more than \(TOMLInputLimits.maximumArrayElements) elements")
        }
        containers[containers.count - 1] = .array(elements: elements + 1)
    }

    /// `[a.b]` or `[[a.b]]` at the start of a line: the parts of its name are counted.
    private mutating func header() throws(TOMLInputViolation) {
        try advance()
        if peek() == UInt8(ascii: "[") { try advance() }
        startKey()
        while let byte = peek(), byte != UInt8(ascii: "]"), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "#") {
            try keyByte(byte)
        }
        finishKey()
        while let byte = peek(), byte == UInt8(ascii: "]") { try advance() }
    }

    /// A key up to `=` (or anything a key cannot hold).
    private mutating func key() throws(TOMLInputViolation) {
        startKey()
        while let byte = peek(), byte != UInt8(ascii: "="), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "#"),
              byte != UInt8(ascii: ","), byte != UInt8(ascii: "}"), byte != UInt8(ascii: "{"), byte != UInt8(ascii: "[") {
            try keyByte(byte)
        }
        finishKey()
        expectingKey = false
    }

    private mutating func startKey() {
        keyParts = 1
        keyText.removeAll(keepingCapacity: true)
    }

    private mutating func keyByte(_ byte: UInt8) throws(TOMLInputViolation) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let start = position
            try string()
            note(bytes[start ..< position])
        case UInt8(ascii: "."):
            keyParts += 1
            if keyParts > TOMLInputLimits.maximumKeyParts {
                throw violation("key has more than \(TOMLInputLimits.maximumKeyParts) dotted parts", key: shortKey() + "…")
            }
            note([byte][...])
            try advance()
        default:
            if byte != UInt8(ascii: " "), byte != UInt8(ascii: "\t") { note([byte][...]) }
            try advance()
        }
    }

    private mutating func note(_ part: ArraySlice<UInt8>) {
        if keyText.count < 64 { keyText += part.prefix(64 - keyText.count) }
    }

    private func shortKey() -> String {
        String(decoding: keyText, as: UTF8.self)
    }

    private mutating func finishKey() {
        lastKey = keyText.count >= 64 ? shortKey() + "…" : shortKey()
    }

    /// One value token: a string, or a bare word (number, boolean, date) up to a delimiter.
    private mutating func value() throws(TOMLInputViolation) {
        try countElement()
        if let byte = peek(), byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
            try string()
            return
        }
        while let byte = peek(), !Self.endsBareValue(byte) { try advance() }
    }

    private static func endsBareValue(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "{"),
             UInt8(ascii: "\n"), UInt8(ascii: "#"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "="):
            true
        default:
            false
        }
    }

    /// A basic or literal string, single- or multi-line; ends at its closing quote, or for
    /// a single-line string at the end of the line (toml++ reports that error).
    private mutating func string() throws(TOMLInputViolation) {
        let quote = bytes[position]
        let multiLine = peek(1) == quote && peek(2) == quote
        if multiLine {
            for _ in 0 ..< 3 { try advance() }
        } else {
            try advance()
        }
        while let byte = peek() {
            if byte == UInt8(ascii: "\\"), quote == UInt8(ascii: "\"") {
                try advance()
                if let next = peek(), next != UInt8(ascii: "\n") || multiLine { try advance() }
                continue
            }
            if byte == UInt8(ascii: "\n"), !multiLine { return }
            if byte == quote {
                if !multiLine {
                    try advance()
                    return
                }
                if peek(1) == quote, peek(2) == quote {
                    // Up to two more quotes may belong to the content ("""a"""" ends in a quote).
                    var run = 0
                    while peek() == quote, run < 5 {
                        try advance()
                        run += 1
                    }
                    return
                }
            }
            try advance()
        }
    }
}
