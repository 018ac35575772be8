/// Reads the keys of one table, checking type and range of each, and reports every problem
/// to ``Diagnostics`` instead of stopping at the first.
///
/// Each accessor returns the value when it is present and valid, else `nil` (the caller
/// then uses the default); ``isInvalid(_:)`` tells "absent" from "reported", so cross-field
/// checks do not pile a second message onto a value already reported.
struct TableReader {
    let path: ConfigPath
    private let values: [String: ConfigValue]
    let diagnostics: Diagnostics
    private var known: [String] = []
    private var invalid: Set<String> = []

    init(path: ConfigPath, values: [String: ConfigValue], diagnostics: Diagnostics) {
        self.path = path
        self.values = values
        self.diagnostics = diagnostics
    }

    func path(_ key: String) -> ConfigPath { path.appending(key) }

    func contains(_ key: String) -> Bool { values[diagnostics.documentKey(key)] != nil }

    func isInvalid(_ key: String) -> Bool { invalid.contains(key) }

    /// The raw value, marking `key` as one this table knows.
    mutating func value(_ key: String) -> ConfigValue? {
        known.append(key)
        return values[diagnostics.documentKey(key)]
    }

    mutating func report(_ key: String, _ message: String) {
        invalid.insert(key)
        diagnostics.report(path(key), message)
    }

    /// `key` as reported already (its elements were, one by one).
    mutating func markInvalid(_ key: String) {
        invalid.insert(key)
    }

    mutating func reportMissing(_ key: String) {
        invalid.insert(key)
        diagnostics.report(path(key), "required key is missing")
    }

    // MARK: Scalars

    mutating func string(_ key: String) -> String? {
        guard let value = value(key) else { return nil }
        guard case let .string(text) = value else {
            report(key, "must be a string, got \(value.typeName)")
            return nil
        }
        return text
    }

    /// A string of at most `maximumLength` characters without control characters: names
    /// that end up in logs, JSON and HTTP headers.
    mutating func text(_ key: String, maximumLength: Int = 128) -> String? {
        guard let text = string(key) else { return nil }
        guard !text.isEmpty, Self.isShortWithoutControls(text, maximumLength: maximumLength) else {
            report(key, "must be 1 to \(maximumLength) characters without control characters, got \(quoted(text))")
            return nil
        }
        return text
    }

    /// At most `maximumLength` scalars, none of them a control character (Unicode general
    /// category Cc). ASCII text, nearly every name, is checked on its bytes: there Cc is
    /// exactly 0x00–0x1F and 0x7F, and a byte is a scalar.
    private static func isShortWithoutControls(_ text: String, maximumLength: Int) -> Bool {
        var ascii = true
        for byte in text.utf8 {
            if byte >= 0x80 {
                ascii = false
                break
            }
            if byte < 0x20 || byte == 0x7F { return false }
        }
        if ascii { return text.utf8.count <= maximumLength }
        return text.unicodeScalars.count <= maximumLength
            && !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    }

    /// An id: it goes into idempotency keys (`|`-separated), URLs and headers, so only a
    /// safe alphabet is allowed.
    mutating func identifier(_ key: String) -> String? {
        guard let text = string(key) else { return nil }
        guard Identifier.isValid(text) else {
            report(key, "must be 1 to 64 letters, digits or . _ - : @, got \(quoted(text))")
            return nil
        }
        return text
    }

    mutating func absolutePath(_ key: String) -> String? {
        guard let text = text(key, maximumLength: 4096) else { return nil }
        guard text.hasPrefix("/") else {
            report(key, "must be an absolute path, got \(quoted(text))")
            return nil
        }
        return text
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>, unit: String? = nil) -> Int? {
        guard let value = value(key) else { return nil }
        let unitSuffix = unit.map { " (\($0))" } ?? ""
        guard case let .integer(number) = value else {
            report(key, "must be an integer\(unitSuffix), got \(value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            report(key, "must be between \(range.lowerBound) and \(range.upperBound)\(unitSuffix), got \(number)")
            return nil
        }
        return number
    }

    /// A float or an integer in `range`.
    mutating func number(_ key: String, in range: ClosedRange<Double>) -> Double? {
        guard let value = value(key) else { return nil }
        let number: Double
        switch value {
        case let .float(float): number = float
        case let .integer(integer): number = Double(integer)
        default:
            report(key, "must be a number, got \(value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            report(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
            return nil
        }
        return number
    }

    /// A positive number of seconds, at most a week.
    mutating func seconds(_ key: String) -> Duration? {
        guard let value = value(key) else { return nil }
        let number: Double
        switch value {
        case let .float(float): number = float
        case let .integer(integer): number = Double(integer)
        default:
            report(key, "must be a number (seconds), got \(value.typeName)")
            return nil
        }
        let maximum = GatewayConfiguration.maximumDuration.components.seconds
        // `!(number > 0)` also catches nan.
        guard number > 0, number <= Double(maximum) else {
            report(key, "must be more than 0 and at most \(maximum) (seconds), got \(formatNumber(number))")
            return nil
        }
        // Whole milliseconds are plenty for presence timing, and exact to print back.
        let milliseconds = Int64((number * 1000).rounded())
        guard milliseconds > 0 else {
            report(key, "must be at least 0.001 (seconds), got \(formatNumber(number))")
            return nil
        }
        return .milliseconds(milliseconds)
    }

    mutating func boolean(_ key: String) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case let .boolean(flag) = value else {
            report(key, "must be true or false, got \(value.typeName)")
            return nil
        }
        return flag
    }

    mutating func choice<Choice: CaseIterable & RawRepresentable<String>>(_ key: String, of _: Choice.Type) -> Choice? {
        guard let text = string(key) else { return nil }
        if let choice = Choice(rawValue: text) { return choice }
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }
        let list = names.count == 2 ? "\(names[0]) or \(names[1])" : "one of " + names.joined(separator: ", ")
        report(key, "must be \(list), got \(quoted(text))")
        return nil
    }

    // MARK: Tables

    /// A sub-table, or `nil` when it is absent or not a table (then reported).
    mutating func table(_ key: String) -> TableReader? {
        guard let value = value(key) else { return nil }
        guard case let .table(values) = value else {
            report(key, "must be a table ([\(path(key))]), got \(value.typeName)")
            return nil
        }
        return TableReader(path: path(key), values: values, diagnostics: diagnostics)
    }

    /// The tables of an array of tables (`[[key]]`), in file order; `nil` when absent.
    mutating func tables(_ key: String) -> [TableReader]? {
        guard let value = value(key) else { return nil }
        let tablePath = path(key)
        // Only a message needs it: not built for the thousands of valid arrays of a roster.
        var header: String {
            "[[\(ConfigPath(components: tablePath.components.filter { if case .key = $0 { true } else { false } }))]]"
        }
        guard case let .array(elements) = value else {
            report(key, "must be an array of tables (write \(header)), got \(value.typeName)")
            return nil
        }
        var readers = [TableReader]()
        for (offset, element) in elements.enumerated() {
            let elementPath = tablePath.appending(element: offset + 1)
            guard case let .table(values) = element else {
                invalid.insert(key)
                diagnostics.report(elementPath, "must be a table (write \(header)), got \(element.typeName)")
                continue
            }
            readers.append(TableReader(path: elementPath, values: values, diagnostics: diagnostics))
        }
        return readers
    }

    /// Reports every key of the table that no accessor asked for, with a suggestion when it
    /// looks like a typo of a known one.
    func reportUnknownKeys() {
        // The common case, every key known, without building the lists a message needs.
        guard values.keys.contains(where: { key in !known.contains { diagnostics.documentKey($0) == key } }) else { return }
        let knownHere = known.map(diagnostics.documentKey)
        for key in values.keys.sorted() where !knownHere.contains(key) {
            let keyPath = diagnostics.dialect == .toml ? path(key) : ConfigPath(components: path.components + [.literal(key)])
            if diagnostics.isFull {
                diagnostics.report(keyPath, "")
                continue
            }
            let what = values[key]?.isTableLike == true ? "unknown table" : "unknown key"
            if let match = suggestion(for: key, among: knownHere) {
                diagnostics.report(keyPath, "\(what); did you mean `\(match)`?")
            } else {
                diagnostics.report(keyPath, "\(what) (known here: \(knownHere.joined(separator: ", ")))")
            }
        }
    }
}

/// `3`, `0.5`: how numbers are echoed in messages and the effective configuration.
func formatNumber(_ number: Double) -> String {
    if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
        return String(Int64(number))
    }
    return "\(number)"
}
