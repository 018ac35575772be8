@testable import Config
import XCTest

/// TOML 1.0's rules on defining a key or table once, each refused at the line that breaks it.
final class TOMLRedefinitionTests: XCTestCase {
    private func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let root = try TOMLParser.parse(text)
            XCTFail("parsed: \(root)", file: file, line: line)
            return ""
        } catch {
            XCTAssertEqual(error.kind, .syntax, file: file, line: line)
            return "\(error.line): \(error.message)"
        }
    }

    func testAKeyIsDefinedOnce() {
        XCTAssertEqual(refusal("a = 1\nb = 2\na = 3\n"), "3: a is defined twice")
        XCTAssertEqual(refusal("[t]\na.b = 1\na.b = 2\n"), "3: t.a.b is defined twice")
        XCTAssertEqual(refusal("[t]\na = 1\na.b = 2\n"), "3: t.a is already an integer, not a table")
        XCTAssertEqual(refusal("\"a\" = 1\n'a' = 2\n"), "2: a is defined twice")
    }

    func testATableHeaderIsWrittenOnce() {
        XCTAssertEqual(refusal("[a]\nx = 1\n[b]\n[a]\n"), "4: table [a] is defined twice")
        XCTAssertEqual(refusal("[a.b]\n[a]\n[a.b]\n"), "3: table [a.b] is defined twice")
        XCTAssertEqual(refusal("a = 1\n[a]\n"), "2: a is already an integer, not a table")
        XCTAssertEqual(refusal("[a]\nb.c = 1\n[a.b]\n"), "3: table [a.b] was already defined by dotted keys (a.b.… = …)")
    }

    func testImplicitTablesMayBeDefinedLaterAndExtended() throws {
        let root = try TOMLParser.parse("[x.y.z]\nw = 1\n[x]\nv = 2\n[fruit]\napple.color = 'red'\n[fruit.apple.texture]\nsmooth = true\n")
        guard case let .table(x)? = root["x"], case .integer(2)? = x["v"], case let .table(y)? = x["y"], case .table? = y["z"],
              case let .table(fruit)? = root["fruit"], case let .table(apple)? = fruit["apple"], case .string("red")? = apple["color"],
              case .table? = apple["texture"] else { return XCTFail("\(root)") }
    }

    func testInlineTablesAndArraysAreClosed() {
        XCTAssertEqual(refusal("a = { b = 1 }\n[a]\n"), "2: a is an inline table ({ … }); nothing can be added to it")
        XCTAssertEqual(refusal("a = { b = 1 }\n[a.c]\n"), "2: a is an inline table ({ … }); nothing can be added to it")
        XCTAssertEqual(refusal("a = { b = 1 }\na.c = 2\n"), "2: a is an inline table ({ … }); nothing can be added to it")
        XCTAssertEqual(refusal("a = [1]\n[[a]]\n"), "2: a is an array written inline; [[a]] cannot add to it")
        XCTAssertEqual(refusal("a = [{ b = 1 }]\n[a.c]\n"), "2: a is an array written inline, not a table")
    }

    func testArraysOfTables() throws {
        let root = try TOMLParser.parse("""
        [[person]]
        id = "a"
        [[person.tag]]
        id = "t1"
        [[person.tag]]
        id = "t2"
        [person.extra]
        k = 1
        [[person]]
        id = "b"
        """)
        guard case let .array(persons)? = root["person"], persons.count == 2, case let .table(first) = persons[0],
              case let .array(tags)? = first["tag"], tags.count == 2, case .table? = first["extra"],
              case let .table(second) = persons[1], second["tag"] == nil else { return XCTFail("\(root)") }
        XCTAssertEqual(refusal("[a]\n[[a]]\n"), "2: a is already a table; [[a]] cannot make it an array of tables")
        XCTAssertEqual(refusal("[[a]]\n[a]\n"), "2: a is an array of tables ([[a]]); [a] cannot define it again")
        XCTAssertEqual(refusal("[[a]]\n[b]\n[a]\nx = 1\n"), "3: a is an array of tables ([[a]]); [a] cannot define it again")
        XCTAssertEqual(refusal("[a]\n[[a.b]]\n[a]\nb.c = 1\n"), "3: table [a] is defined twice")
    }

    func testDottedKeysCannotReachIntoAHeadersTable() {
        XCTAssertEqual(refusal("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n"), "4: table [a.b.c] is defined by its header; dotted keys cannot add to it from here")
        XCTAssertEqual(refusal("[[a.b]]\n[a]\nb.c = 1\n"), "3: a.b is an array of tables; dotted keys cannot add to it")
    }

    func testMalformedHeaders() {
        XCTAssertEqual(refusal("[a\n"), "1: a table header must end with ']', found the end of the line")
        XCTAssertEqual(refusal("[[a]\n"), "1: a table header must end with ']]', found the end of the line")
        XCTAssertEqual(refusal("[[a] ]\n"), "1: a table header must end with ']]', found ' '")
        XCTAssertEqual(refusal("[[a]é\n"), "1: a table header must end with ']]', found 'é'")
        XCTAssertEqual(refusal("[]\n"), "1: a table header needs a name after '[', e.g. [presence] or [[person]]")
        XCTAssertEqual(refusal("[a] b = 1\n"), "1: expected the end of the line, found 'b'")
    }
}
