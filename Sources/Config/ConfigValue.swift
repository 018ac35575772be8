/// A parsed TOML value (``TOMLParser``), or a JSON one (``JSONDocument``): validation works
/// on plain Sendable values whatever the document's format.
enum ConfigValue: Sendable {
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
}
