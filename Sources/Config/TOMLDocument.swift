#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CTOML

/// toml++ (TOMLKit's parser) read through TOMLKit's C layer, so that this file owns every
/// allocation the parse makes.
///
/// TOMLKit 0.6.0's Swift types leak: `TOMLTable` has no deinit, so a parsed tree is never
/// deleted (the whole roster's tree, again on every SIGHUP reload), and every
/// key listing and every scalar read (strings, even integers and booleans) is a `malloc`
/// nobody frees. Here the document is
/// taken apart while it is converted: every subtree is erased from toml++'s tree as soon
/// as it has been copied into ``ConfigValue``, so the two never both hold the whole file
/// (the agent's peak memory: docs/benchmarks.md). What cannot be freed through the C layer is the
/// empty root `toml::table` object itself (one small allocation per parse).
enum TOMLDocument {
    struct SyntaxError: Error {
        var line: Int
        var message: String
    }

    /// The document's root table. `text` must not contain NUL (toml++ reads a C string).
    static func parse(_ text: String) throws(SyntaxError) -> [String: ConfigValue] {
        // Filled in (description strdup'd) only when parsing fails.
        let error = UnsafeMutablePointer<CTOMLParseError>.allocate(capacity: 1)
        defer { error.deallocate() }
        guard let root = text.withCString({ tableCreateFromString($0, error) }) else {
            let description = error.pointee.description
            defer { free(UnsafeMutableRawPointer(mutating: description)) }
            throw SyntaxError(line: Int(error.pointee.source.begin.line), message: String(cString: description))
        }
        defer { tableClear(root) }
        return consume(table: root)
    }

    /// The table's entries, erasing each from toml++'s tree once copied.
    private static func consume(table: OpaquePointer) -> [String: ConfigValue] {
        let count = tableSize(table)
        guard count > 0 else { return [:] }
        // Both lists are malloc'd by the C layer (keys also strdup'd one by one) and the
        // caller frees them; values are pointers into the tree, valid until erased.
        let keys = tableGetKeys(table)
        let values = tableGetValues(table)
        var names = [String]()
        names.reserveCapacity(count)
        for index in 0 ..< count {
            names.append(String(cString: keys[index]))
            free(UnsafeMutableRawPointer(mutating: keys[index]))
        }
        free(UnsafeMutableRawPointer(mutating: keys))
        var result = [String: ConfigValue](minimumCapacity: count)
        for index in 0 ..< count {
            result[names[index]] = consume(node: values[index])
            // Erasing one entry leaves the other nodes (separate allocations) in place.
            tableRemoveElement(table, names[index])
        }
        free(UnsafeMutableRawPointer(mutating: values))
        return result
    }

    /// Last element first, popping each off the array (a vector: removing the last is free).
    private static func consume(array: OpaquePointer) -> [ConfigValue] {
        var elements = [ConfigValue]()
        let count = arraySize(array)
        elements.reserveCapacity(count)
        for index in stride(from: count - 1, through: 0, by: -1) {
            elements.append(consume(node: arrayGetNode(array, Int64(index))))
            arrayRemoveElement(array, Int64(index))
        }
        elements.reverse()
        return elements
    }

    private static func consume(node: OpaquePointer) -> ConfigValue {
        switch nodeType(node) {
        case .table:
            guard let table = nodeAsTable(node) else { return .other(typeName: "table") }
            return .table(consume(table: table))
        case .array:
            guard let array = nodeAsArray(node) else { return .other(typeName: "array") }
            return .array(consume(array: array))
        case .string:
            guard let pointer = nodeAsString(node) else { return .other(typeName: "string") }
            defer { free(UnsafeMutableRawPointer(mutating: pointer)) }
            return .string(String(cString: pointer))
        case .integer:
            return take(nodeAsInt(node)).map { .integer(Int($0)) } ?? .other(typeName: "integer")
        case .floatingPoint:
            return take(nodeAsDouble(node)).map(ConfigValue.float) ?? .other(typeName: "float")
        case .boolean:
            return take(nodeAsBool(node)).map(ConfigValue.boolean) ?? .other(typeName: "boolean")
        case .date: return .other(typeName: "date")
        case .timeType: return .other(typeName: "time")
        case .dateTime: return .other(typeName: "date-time")
        }
    }

    /// The value of a scalar the C layer copied into its own `malloc` block, which is freed.
    private static func take<Value>(_ pointer: UnsafePointer<Value>?) -> Value? {
        guard let pointer else { return nil }
        defer { free(UnsafeMutableRawPointer(mutating: pointer)) }
        return pointer.pointee
    }
}
