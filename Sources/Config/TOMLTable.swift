/// A table while ``TOMLParser`` builds it, with what TOML 1.0 needs to know to refuse
/// redefinitions: how the table came to be. Inline tables and arrays written inline are
/// finished ``ConfigValue``s here, which is why nothing can add to them.
final class TOMLTable {
    enum Origin {
        /// Made on the way to a header's last part (`a` of `[a.b]`): a later `[a]` may define it.
        case implicit
        /// Defined by its own `[header]` or `[[header]]`.
        case header
        /// Made by a dotted key (`a.b = 1` makes `a`): only more dotted keys may add to it.
        case dotted
    }

    enum Entry {
        case table(TOMLTable)
        case tables(TOMLTableArray)
        case value(ConfigValue)
    }

    var origin: Origin
    var entries: [String: Entry] = [:]

    init(origin: Origin) {
        self.origin = origin
    }

    /// The tree as values. Recursion depth is bounded: a header has at most
    /// ``TOMLInputLimits/maximumKeyParts`` parts, so has a dotted key below it.
    var value: [String: ConfigValue] {
        var result = [String: ConfigValue](minimumCapacity: entries.count)
        for (key, entry) in entries {
            switch entry {
            case let .table(table): result[key] = .table(table.value)
            case let .tables(array): result[key] = .array(array.tables.map { .table($0.value) })
            case let .value(value): result[key] = value
            }
        }
        return result
    }
}

/// `[[name]]`'s tables in file order.
final class TOMLTableArray {
    var tables: [TOMLTable]

    init(first: TOMLTable) {
        tables = [first]
    }
}

/// Why a key or header cannot go where it is written (the parser adds the line).
struct TOMLRedefinition: Error {
    var message: String
}

extension TOMLTable {
    /// The table a header's part names, walking into the last table of an array of tables
    /// (then also its ordinal). `name` is the dotted name so far, for the message.
    func tableForHeaderPart(_ key: String, name: @autoclosure () -> String) throws(TOMLRedefinition) -> (TOMLTable, ordinal: Int?) {
        switch entries[key] {
        case nil:
            let table = TOMLTable(origin: .implicit)
            entries[key] = .table(table)
            return (table, nil)
        case let .table(table)?: return (table, nil)
        case let .tables(array)?: return (array.tables[array.tables.count - 1], array.tables.count)
        case let .value(value)?: throw Self.notATable(name(), value)
        }
    }

    /// `[name]`'s own table: new, or one only made implicitly so far.
    func defineTable(_ key: String, name: @autoclosure () -> String) throws(TOMLRedefinition) -> TOMLTable {
        switch entries[key] {
        case nil:
            let table = TOMLTable(origin: .header)
            entries[key] = .table(table)
            return table
        case let .table(table)?:
            switch table.origin {
            case .implicit:
                table.origin = .header
                return table
            case .header: throw TOMLRedefinition(message: "table [\(name())] is defined twice")
            case .dotted: throw TOMLRedefinition(message: "table [\(name())] was already defined by dotted keys (\(name()).… = …)")
            }
        case .tables?:
            throw TOMLRedefinition(message: "\(name()) is an array of tables ([[\(name())]]); [\(name())] cannot define it again")
        case let .value(value)?: throw Self.notATable(name(), value)
        }
    }

    /// A new table at the end of `[[name]]`'s array.
    func appendTable(_ key: String, name: @autoclosure () -> String) throws(TOMLRedefinition) -> (TOMLTable, ordinal: Int) {
        let table = TOMLTable(origin: .header)
        switch entries[key] {
        case nil:
            entries[key] = .tables(TOMLTableArray(first: table))
            return (table, 1)
        case let .tables(array)?:
            array.tables.append(table)
            return (table, array.tables.count)
        case .table?:
            throw TOMLRedefinition(message: "\(name()) is already a table; [[\(name())]] cannot make it an array of tables")
        case let .value(value)?:
            if case .array = value {
                throw TOMLRedefinition(message: "\(name()) is an array written inline; [[\(name())]] cannot add to it")
            }
            throw Self.notATable(name(), value)
        }
    }

    /// The table a dotted key's inner part names: new, or made by dotted keys before.
    func tableForDottedPart(_ key: String, name: @autoclosure () -> String) throws(TOMLRedefinition) -> TOMLTable {
        switch entries[key] {
        case nil:
            let table = TOMLTable(origin: .dotted)
            entries[key] = .table(table)
            return table
        case let .table(table)?:
            guard table.origin != .header else {
                throw TOMLRedefinition(message: "table [\(name())] is defined by its header; dotted keys cannot add to it from here")
            }
            return table
        case .tables?:
            throw TOMLRedefinition(message: "\(name()) is an array of tables; dotted keys cannot add to it")
        case let .value(value)?: throw Self.notATable(name(), value)
        }
    }

    /// The value of a key's last part; a key is defined once.
    func define(_ key: String, _ value: ConfigValue, name: @autoclosure () -> String) throws(TOMLRedefinition) {
        guard entries[key] == nil else { throw TOMLRedefinition(message: "\(name()) is defined twice") }
        entries[key] = .value(value)
    }

    private static func notATable(_ name: String, _ value: ConfigValue) -> TOMLRedefinition {
        switch value {
        case .table: return TOMLRedefinition(message: "\(name) is an inline table ({ … }); nothing can be added to it")
        case .array: return TOMLRedefinition(message: "\(name) is an array written inline, not a table")
        default: break
        }
        let article = value.typeName.first.map { "aeiou".contains($0) } == true ? "an" : "a"
        return TOMLRedefinition(message: "\(name) is already \(article) \(value.typeName), not a table")
    }
}
