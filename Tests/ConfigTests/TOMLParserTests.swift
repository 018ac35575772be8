#if canImport(Glibc)
import Glibc
#endif
@testable import Config
import XCTest

/// The document through ``TOMLParser``: every TOML type arrives, and parsing frees what
/// it allocates (the agent re-parses on every SIGHUP).
final class TOMLParserTests: XCTestCase {
    func testEveryTypeArrivesInFileOrderWhereOrderMatters() throws {
        let root = try TOMLParser.parse("""
        name = "door \\u00e9"
        count = -42
        hex = 0xff
        ratio = 0.25
        on = true
        off = false
        when = 2026-11-22T07:00:00Z
        day = 2026-11-22
        nested = [[1, 2], ["a"], []]
        inline = { a = 1, b = { c = "d" } }
        [[person]]
        id = "first"
        [[person.tag]]
        id = "t1"
        [[person]]
        id = "second"
        """)
        guard case let .string(name)? = root["name"] else { return XCTFail("name: \(String(describing: root["name"]))") }
        XCTAssertEqual(name, "door é")
        guard case .integer(-42)? = root["count"], case .integer(255)? = root["hex"],
              case .float(0.25)? = root["ratio"], case .boolean(true)? = root["on"], case .boolean(false)? = root["off"]
        else { return XCTFail("scalars: \(root)") }
        XCTAssertEqual(root["when"]?.typeName, "date-time")
        XCTAssertEqual(root["day"]?.typeName, "date")
        guard case let .array(nested)? = root["nested"], nested.count == 3,
              case let .array(first) = nested[0], case .integer(1) = first[0], case .integer(2) = first[1],
              case let .array(second) = nested[1], case .string("a") = second[0],
              case let .array(third) = nested[2], third.isEmpty
        else { return XCTFail("nested: \(String(describing: root["nested"]))") }
        guard case let .table(inline)? = root["inline"], case .integer(1)? = inline["a"],
              case let .table(inner)? = inline["b"], case .string("d")? = inner["c"]
        else { return XCTFail("inline: \(String(describing: root["inline"]))") }
        guard case let .array(persons)? = root["person"], persons.count == 2,
              case let .table(one) = persons[0], case .string("first")? = one["id"],
              case let .array(tags)? = one["tag"], tags.count == 1,
              case let .table(two) = persons[1], case .string("second")? = two["id"]
        else { return XCTFail("persons in file order: \(String(describing: root["person"]))") }
        XCTAssertEqual(root["person"]?.typeName, "array of tables")
    }

    func testSyntaxErrorNamesItsLine() {
        XCTAssertThrowsError(try TOMLParser.parse("a = 1\nb = \n")) { error in
            guard let error = error as? TOMLSyntaxError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.line, 2)
            XCTAssertFalse(error.message.isEmpty)
        }
    }

    /// A SIGHUP re-parses the file: 30 parses of a 2,000-person file must not pile up.
    func testParsingFreesWhatItAllocates() throws {
        var text = ""
        for person in 0 ..< 2_000 {
            text += "[[person]]\nid = \"u_\(person)\"\nrequire_proof = false\n"
            for tag in 0 ..< 2 {
                text += "  [[person.tag]]\n  id = \"t_\(person)_\(tag)\"\n  ibeacon = \"f7826da6-4fa2-4e98-8024-bc5b71e0893e:\(person + 1):\(tag + 1)\"\n"
            }
        }
        _ = try TOMLParser.parse(text)
        let before = residentKiB()
        for _ in 0 ..< 30 {
            let root = try TOMLParser.parse(text)
            guard case let .array(persons)? = root["person"] else { return XCTFail("no persons") }
            XCTAssertEqual(persons.count, 2_000)
        }
        let growth = residentKiB() - before
        XCTAssertLessThan(growth, 16 * 1024, "resident memory grew by \(growth) KiB over 30 parses")
    }

    private func residentKiB() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 128)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return 0 }
        let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let fields = String(decoding: text, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}
