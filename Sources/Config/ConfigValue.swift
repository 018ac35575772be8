import TOMLKit

/// A parsed TOML value, copied out of TOMLKit's C++-backed tree at once so validation works
/// on plain Sendable values.
indirect enum ConfigValue: Sendable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case table([String: ConfigValue])
    case array([ConfigValue])
    /// Dates and times: TOML has them, this configuration never uses them.
    case other(typeName: String)

    /// The name used in "got …" of type errors.
    var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .float: "float"
        case .boolean: "boolean"
        case .table: "table"
        case let .array(elements):
            elements.allSatisfy { if case .table = $0 { true } else { false } } && !elements.isEmpty
                ? "array of tables" : "array"
        case let .other(typeName): typeName
        }
    }

    var isTableLike: Bool {
        switch self {
        case .table: true
        case .array: typeName == "array of tables"
        default: false
        }
    }

    init(_ table: TOMLTable) {
        var values = [String: ConfigValue]()
        for key in table.keys {
            guard let value = table[key] else { continue }
            values[key] = ConfigValue(value)
        }
        self = .table(values)
    }

    init(_ node: TOMLValueConvertible) {
        switch node.type {
        case .string: self = node.string.map(ConfigValue.string) ?? .other(typeName: "string")
        case .int: self = node.int.map(ConfigValue.integer) ?? .other(typeName: "integer")
        case .double: self = node.double.map(ConfigValue.float) ?? .other(typeName: "float")
        case .bool: self = node.bool.map(ConfigValue.boolean) ?? .other(typeName: "boolean")
        case .table:
            if let table = node.table { self = ConfigValue(table) } else { self = .other(typeName: "table") }
        case .array:
            if let array = node.array {
                self = .array(array.map { ConfigValue($0) })
            } else {
                self = .other(typeName: "array")
            }
        case .date: self = .other(typeName: "date")
        case .time: self = .other(typeName: "time")
        case .dateTime: self = .other(typeName: "date-time")
        }
    }
}
