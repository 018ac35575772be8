/// The configuration's TOML 1.0 parser: the text read once, into ``ConfigValue``s, with
/// the line of every key and table header when asked for (``SourceIndex``).
///
/// Owned rather than borrowed because the file is untrusted input re-read on every SIGHUP:
/// every bound of ``TOMLInputLimits`` is enforced as the text is read (nesting bounds the
/// recursion, key parts bound the tree's depth), every loop moves forward, so time is
/// linear and no input can exhaust the stack; and lines come from the same reading as
/// the values (docs/configuration.md, docs/architecture.md).
struct TOMLParser {
    private var scanner: TOMLScanner
    private let root = TOMLTable(origin: .header)
    /// The table that `key = value` lines go into, its header's keys (for messages) and,
    /// when recording, its path.
    private var table: TOMLTable
    private var tableKeys: [String] = []
    private var tablePath = ConfigPath.root
    /// The line of each key and header, first writing wins; nil when not asked for (a
    /// valid file needs no lines: the peak memory target, docs/benchmarks.md).
    private var lines: [ConfigPath: Int]?

    /// The document's root table.
    static func parse(_ text: String) throws(TOMLSyntaxError) -> [String: ConfigValue] {
        var parser = TOMLParser(text: text, recordingLines: false)
        try parser.document()
        return parser.root.value
    }

    /// The line of every key and header of a document; empty when it is not valid TOML.
    static func lines(of text: String) -> [ConfigPath: Int] {
        var parser = TOMLParser(text: text, recordingLines: true)
        do {
            try parser.document()
        } catch {
            return [:]
        }
        return parser.lines ?? [:]
    }

    private init(text: String, recordingLines: Bool) {
        scanner = TOMLScanner(bytes: Array(text.utf8))
        table = root
        lines = recordingLines ? [:] : nil
    }

    private mutating func record(_ path: ConfigPath?, line: Int) {
        guard let path, lines != nil, lines?[path] == nil else { return }
        lines?[path] = line
    }

    private var recording: Bool { lines != nil }

    // MARK: Statements

    private mutating func document() throws(TOMLSyntaxError) {
        while true {
            try scanner.skipBlanksCommentsAndNewlines()
            guard let byte = scanner.peek() else { break }
            if byte == UInt8(ascii: "[") {
                try header()
            } else {
                try keyValue()
            }
            scanner.skipBlanks()
            try scanner.skipComment()
            if scanner.isAtEnd { break }
            guard scanner.atNewline else {
                throw scanner.syntaxError("expected the end of the line, found \(scanner.describe())")
            }
        }
        try scanner.checkLastLine()
    }

    /// `[a.b]` or `[[a.b]]`: the table the following keys go into.
    private mutating func header() throws(TOMLSyntaxError) {
        let line = scanner.line
        scanner.skip()
        let isArray = scanner.peek() == UInt8(ascii: "[")
        if isArray { scanner.skip() }
        scanner.skipBlanks()
        guard scanner.atKeyStart else {
            throw scanner.syntaxError("a table header needs a name after '[', e.g. [presence] or [[person]]")
        }
        let keys = try scanner.dottedKey()
        scanner.skipBlanks()
        let closing = isArray ? "]]" : "]"
        guard scanner.peek() == UInt8(ascii: "]"), !isArray || scanner.peek(1) == UInt8(ascii: "]") else {
            let found = scanner.describe(at: scanner.peek() == UInt8(ascii: "]") ? 1 : 0)
            throw scanner.syntaxError("a table header must end with '\(closing)', found \(found)")
        }
        scanner.skip(closing.utf8.count)

        var current = root
        var path: ConfigPath? = recording ? .root : nil
        do throws(TOMLRedefinition) {
            for (index, key) in keys.enumerated() {
                let name = { Self.name(keys[...index]) }
                path = path?.appending(key)
                record(path, line: line)
                if index < keys.count - 1 {
                    let (table, ordinal) = try current.tableForHeaderPart(key, name: name())
                    current = table
                    if let ordinal { path = path?.appending(element: ordinal) }
                } else if isArray {
                    let (table, ordinal) = try current.appendTable(key, name: name())
                    current = table
                    path = path?.appending(element: ordinal)
                } else {
                    current = try current.defineTable(key, name: name())
                }
                record(path, line: line)
            }
        } catch {
            throw scanner.syntaxError(error.message, line: line)
        }
        table = current
        tableKeys = keys
        tablePath = path ?? .root
    }

    /// `key = value` into the current table.
    private mutating func keyValue() throws(TOMLSyntaxError) {
        try keyValue(into: table, names: tableKeys, path: recording ? tablePath : nil, depth: 0)
    }

    /// One `key = value` into `target`: the current table, or an inline table being read
    /// (`depth` arrays and inline tables deep).
    private mutating func keyValue(into target: TOMLTable, names: [String], path: ConfigPath?, depth: Int) throws(TOMLSyntaxError) {
        let line = scanner.line
        guard scanner.atKeyStart else {
            throw scanner.syntaxError("expected a key (letters, digits, '_' and '-', or a quoted string), found \(scanner.describe())")
        }
        let keys = try scanner.dottedKey()
        scanner.skipBlanks()
        guard scanner.peek() == UInt8(ascii: "=") else {
            throw scanner.syntaxError("expected '=' after the key \(Self.name(keys[...])), found \(scanner.describe())")
        }
        scanner.skip()
        scanner.skipBlanks()
        var keyPath = path
        for key in keys {
            keyPath = keyPath?.appending(key)
            record(keyPath, line: line)
        }
        let value = try value(depth: depth, enclosing: nil, path: keyPath)
        var current = target
        do throws(TOMLRedefinition) {
            for (index, key) in keys.enumerated() {
                let name = { Self.name(names + keys[...index]) }
                if index < keys.count - 1 {
                    current = try current.tableForDottedPart(key, name: name())
                } else {
                    try current.define(key, value, name: name())
                }
            }
        } catch {
            throw scanner.syntaxError(error.message, line: line)
        }
    }

    // MARK: Values

    private enum Container {
        case array
        case inlineTable
    }

    /// One value, `depth` arrays and inline tables deep, inside `enclosing`.
    private mutating func value(depth: Int, enclosing: Container?, path: ConfigPath?) throws(TOMLSyntaxError) -> ConfigValue {
        guard let byte = scanner.peek() else { throw scanner.syntaxError("expected a value at the end of the file") }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try scanner.string())
        case UInt8(ascii: "["):
            return try array(depth: depth + 1, path: path)
        case UInt8(ascii: "{"):
            return try inlineTable(depth: depth + 1, path: path)
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            if let enclosing, (byte == UInt8(ascii: "]")) != (enclosing == .array) { throw unbalanced() }
            throw scanner.syntaxError("expected a value, found \(scanner.describe())")
        default:
            return try bareValue()
        }
    }

    private func unbalanced() -> TOMLSyntaxError {
        scanner.syntaxError("unbalanced brackets: a ']' or '}' does not match the '[' or '{' it closes")
    }

    /// A number, boolean, date or time: the bytes up to the next delimiter.
    private mutating func bareValue() throws(TOMLSyntaxError) -> ConfigValue {
        let start = scanner.position
        while let byte = scanner.peek(), TOMLScalar.isValueByte(byte) { scanner.skip() }
        // `1979-05-27 07:32:00`: a date, a space, a time.
        if scanner.position - start == 10, scanner.peek() == UInt8(ascii: " "),
           let first = scanner.peek(1), let second = scanner.peek(2), scanner.peek(3) == UInt8(ascii: ":"),
           (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(first), (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(second) {
            scanner.skip()
            while let byte = scanner.peek(), TOMLScalar.isValueByte(byte) { scanner.skip() }
        }
        guard scanner.position > start else {
            throw scanner.syntaxError("expected a value, found \(scanner.describe())")
        }
        do throws(TOMLScalar.Problem) {
            return try TOMLScalar.value(Array(scanner.bytes[start ..< scanner.position]))
        } catch {
            throw scanner.syntaxError(error.message)
        }
    }

    private func checkNesting(_ depth: Int) throws(TOMLSyntaxError) {
        guard depth <= TOMLInputLimits.maximumNesting else {
            throw scanner.limitError("arrays and inline tables are nested more than \(TOMLInputLimits.maximumNesting) deep")
        }
    }

    /// `[1, 2, 3]`: over lines, with comments, a trailing comma allowed; elements of any types.
    private mutating func array(depth: Int, path: ConfigPath?) throws(TOMLSyntaxError) -> ConfigValue {
        try checkNesting(depth)
        let startLine = scanner.line
        scanner.skip()
        var elements = [ConfigValue]()
        while true {
            try scanner.skipBlanksCommentsAndNewlines()
            guard let byte = scanner.peek() else {
                throw scanner.syntaxError("the array opened on line \(startLine) is not closed with ']'", line: startLine)
            }
            if byte == UInt8(ascii: "]") { break }
            guard elements.count < TOMLInputLimits.maximumArrayElements else {
                throw scanner.limitError("array has more than \(TOMLInputLimits.maximumArrayElements) elements")
            }
            let elementPath = path?.appending(element: elements.count + 1)
            record(elementPath, line: scanner.line)
            elements.append(try value(depth: depth, enclosing: .array, path: elementPath))
            try scanner.skipBlanksCommentsAndNewlines()
            switch scanner.peek() {
            case UInt8(ascii: ",")?: scanner.skip()
            case UInt8(ascii: "]")?: break
            case UInt8(ascii: "}")?: throw unbalanced()
            case nil: throw scanner.syntaxError("the array opened on line \(startLine) is not closed with ']'", line: startLine)
            default: throw scanner.syntaxError("expected ',' or ']' after an array element, found \(scanner.describe())")
            }
        }
        scanner.skip()
        return .array(elements)
    }

    /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma; finished once closed.
    private mutating func inlineTable(depth: Int, path: ConfigPath?) throws(TOMLSyntaxError) -> ConfigValue {
        try checkNesting(depth)
        scanner.skip()
        let inline = TOMLTable(origin: .header)
        scanner.skipBlanks()
        if scanner.peek() == UInt8(ascii: "}") {
            scanner.skip()
            return .table([:])
        }
        while true {
            scanner.skipBlanks()
            if scanner.atNewline { throw scanner.syntaxError("an inline table ({ … }) must close on the line it opens") }
            try keyValue(into: inline, names: [], path: path, depth: depth)
            scanner.skipBlanks()
            switch scanner.peek() {
            case UInt8(ascii: ",")?:
                scanner.skip()
                scanner.skipBlanks()
                if scanner.peek() == UInt8(ascii: "}") { throw scanner.syntaxError("an inline table cannot end with ','") }
            case UInt8(ascii: "}")?:
                scanner.skip()
                return .table(inline.value)
            case UInt8(ascii: "]")?:
                throw unbalanced()
            case let other:
                if scanner.atNewline || other == nil {
                    throw scanner.syntaxError("an inline table ({ … }) must close on the line it opens")
                }
                throw scanner.syntaxError("expected ',' or '}' in an inline table, found \(scanner.describe())")
            }
        }
    }

    /// A dotted name for a message, quoted where the key is not bare and bounded.
    private static func name(_ keys: ArraySlice<String>) -> String {
        ConfigPath(components: keys.map { .key($0) }).description
    }

    private static func name(_ keys: [String]) -> String {
        name(keys[...])
    }
}
