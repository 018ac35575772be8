@testable import Config
import XCTest

/// Each kind of TOML 1.0 value through ``TOMLParser``, and the spellings it refuses.
final class TOMLValueTests: XCTestCase {
    private func value(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigValue? {
        do {
            return try TOMLParser.parse("v = \(text)\n")["v"]
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
            return nil
        }
    }

    /// The parser's message for `v = text` (line 1).
    private func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let root = try TOMLParser.parse(text)
            XCTFail("parsed: \(root)", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    private func string(_ text: String) -> String? {
        guard case let .string(string)? = value(text) else { return nil }
        return string
    }

    func testStrings() {
        XCTAssertEqual(string(#""a \"b\" \\ \t\n\b\f\r""#), "a \"b\" \\ \t\n\u{8}\u{C}\r")
        XCTAssertEqual(string(#""\u00e9\U0001F600""#), "é😀")
        XCTAssertEqual(string(#"'C:\path\n'"#), #"C:\path\n"#)
        XCTAssertEqual(string("\"\"\"\nline 1\nline 2\"\"\""), "line 1\nline 2")
        XCTAssertEqual(string("\"\"\"a \\\n     b\\\n\n  c\"\"\""), "a b" + "c")
        XCTAssertEqual(string("\"\"\"two \"\"quotes\"\" \"\"\"\"\""), "two \"\"quotes\"\" \"\"")
        XCTAssertEqual(string("'''\nraw \\n ''quoted'' '''"), "raw \\n ''quoted'' ")
        XCTAssertEqual(string("'''a''''"), "a'")
        XCTAssertEqual(string("\"é\t\""), "é\t")
        XCTAssertEqual(string("\"\"\"a\r\nb\"\"\""), "a\r\nb")
    }

    func testStringsRefused() {
        XCTAssertTrue(refusal(#"v = "\x41""#).hasPrefix("unknown escape '\\x'"))
        XCTAssertTrue(refusal(#"v = "\é""#).hasPrefix("unknown escape '\\é'"))
        XCTAssertEqual(refusal(#"v = "\uD800""#), "\\uD800 is not a Unicode scalar value")
        XCTAssertEqual(refusal(#"v = "\U00110000""#), "\\U110000 is not a Unicode scalar value")
        XCTAssertEqual(refusal(#"v = "\u12""#), "\\u needs exactly 4 hexadecimal digits")
        XCTAssertEqual(refusal("v = \"a\u{1}\""), "a string holds a control character (U+0001); write it as an escape")
        XCTAssertEqual(refusal("v = 'a\nb'"), "the string is not closed on its line (a multi-line string needs ''')")
        XCTAssertEqual(refusal("v = \"\"\"a\n\nb"), "the string started on line 1 is not closed")
        XCTAssertEqual(refusal("v = \"\"\"a\"\"\"\"\"\"\n"), "too many quotes in a row in a multi-line string")
        XCTAssertEqual(refusal("# a\u{7F}\n"), "a comment holds a control character (U+007F)")
        XCTAssertEqual(refusal("v = 1\r"), "expected the end of the line, found 'U+000D'")
    }

    func testIntegers() {
        let cases: [(String, Int)] = [
            ("0", 0), ("+0", 0), ("-0", 0), ("42", 42), ("+17", 17), ("-70", -70), ("1_000_000", 1_000_000),
            ("0xDEAD_beef", 0xDEAD_BEEF), ("0o755", 0o755), ("0b1101", 13),
            ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min), ("0x7FFFFFFFFFFFFFFF", Int.max),
        ]
        for (text, expected) in cases {
            guard case let .integer(integer)? = value(text) else { return XCTFail(text) }
            XCTAssertEqual(integer, expected, text)
        }
        XCTAssertEqual(refusal("v = 012"), "\"012\": a number cannot start with 0 (write 0x, 0o or 0b for other bases)")
        XCTAssertEqual(refusal("v = 1__0"), "\"1__0\": '_' must stand between two digits")
        XCTAssertEqual(refusal("v = 10_"), "\"10_\": '_' must stand between two digits")
        XCTAssertEqual(refusal("v = 9223372036854775808"), "\"9223372036854775808\" does not fit in a 64-bit integer")
        XCTAssertEqual(refusal("v = 0x1_0000_0000_0000_0000"), "\"1_0000_0000_0000_0000\" does not fit in a 64-bit integer")
        XCTAssertEqual(refusal("v = 0o8"), "\"8\" is not a base-8 integer")
        XCTAssertTrue(refusal("v = +0x1").hasPrefix("\"+0x1\" is not a TOML value"))
        XCTAssertTrue(refusal("v = 1x").hasPrefix("\"1x\" is not a TOML value"))
    }

    func testFloats() {
        let cases: [(String, Double)] = [
            ("0.25", 0.25), ("-2.5", -2.5), ("+1.0", 1), ("1e6", 1e6), ("6.626e-34", 6.626e-34), ("1E+2", 100),
            ("1_000.000_1", 1000.0001), ("-0.0", -0.0), ("inf", .infinity), ("+inf", .infinity), ("-inf", -.infinity),
        ]
        for (text, expected) in cases {
            guard case let .float(float)? = value(text) else { return XCTFail(text) }
            XCTAssertEqual(float, expected, text)
        }
        for text in ["nan", "+nan", "-nan"] {
            guard case let .float(float)? = value(text) else { return XCTFail(text) }
            XCTAssertTrue(float.isNaN, text)
        }
        XCTAssertEqual(refusal("v = 1."), "\"1.\": a '.' needs digits on both sides")
        XCTAssertTrue(refusal("v = .5").hasPrefix("\".5\" is not a TOML value"))
        XCTAssertTrue(refusal("v = 1e").hasPrefix("\"1e\" is not a TOML value"))
        XCTAssertEqual(refusal("v = 03.14"), "\"03.14\": a number cannot start with 0 (write 0x, 0o or 0b for other bases)")
        XCTAssertTrue(refusal("v = infinity").hasPrefix("\"infinity\" is not a TOML value"))
    }

    func testBooleansAndBareWords() {
        guard case .boolean(true)? = value("true"), case .boolean(false)? = value("false") else { return XCTFail() }
        XCTAssertTrue(refusal("v = True").hasPrefix("\"True\" is not a TOML value (strings need quotes"))
        XCTAssertTrue(refusal("v = door").hasPrefix("\"door\" is not a TOML value"))
        XCTAssertEqual(refusal("v =\n"), "expected a value, found the end of the line")
        XCTAssertEqual(refusal("v = "), "expected a value at the end of the file")
    }

    /// Dates and times are checked and arrive as `.other`: a key given one is refused
    /// by its own check ("must be a string, got date").
    func testDatesAndTimes() {
        let cases = [
            ("1979-05-27T07:32:00Z", "date-time"), ("1979-05-27 07:32:00.999-07:00", "date-time"),
            ("1979-05-27t07:32:00", "date-time"), ("2024-02-29", "date"), ("07:32:00", "time"), ("00:00:60.5", "time"),
        ]
        for (text, kind) in cases {
            XCTAssertEqual(value(text)?.typeName, kind, text)
        }
        for text in ["2023-02-29", "1979-13-01", "1979-05-27T24:00:00", "07:32", "1979-05-27T07:32:00+7"] {
            XCTAssertTrue(refusal("v = \(text)").hasSuffix("is not a valid TOML date or time (and dates and times are not used in this configuration)"), text)
        }
        assertIssues("[gateway]\nid = 1979-05-27\n", ["gateway.toml:2: gateway.id: must be a string, got date"])
    }

    func testArraysMixTypesNestAndSpanLines() {
        guard case let .array(elements)? = value("[\n  1, 'a', # one\n  [2.5, { b = true }],\n  [],\n]") else { return XCTFail() }
        XCTAssertEqual(elements.map(\.typeName), ["integer", "string", "array", "array"])
        guard case let .array(inner) = elements[2], case .float(2.5) = inner[0], case let .table(table) = inner[1],
              case .boolean(true)? = table["b"] else { return XCTFail("\(elements)") }
        XCTAssertEqual(refusal("v = [1 2]"), "expected ',' or ']' after an array element, found '2'")
        XCTAssertEqual(refusal("v = [1,,]"), "expected a value, found ','")
        XCTAssertEqual(refusal("a = 1\nv = [\n1,\n"), "the array opened on line 2 is not closed with ']'")
    }

    func testInlineTables() {
        guard case let .table(table)? = value("{ a = 1, b.c = 'x', \"d e\" = {} }"), case .integer(1)? = table["a"],
              case let .table(b)? = table["b"], case .string("x")? = b["c"], case .table? = table["d e"]
        else { return XCTFail() }
        XCTAssertEqual(refusal("v = { a = 1, }"), "an inline table cannot end with ','")
        XCTAssertEqual(refusal("v = { a = 1,\n b = 2 }"), "an inline table ({ … }) must close on the line it opens")
        XCTAssertEqual(refusal("v = { a = 1\n}"), "an inline table ({ … }) must close on the line it opens")
        XCTAssertEqual(refusal("v = { a = 1, a = 2 }"), "a is defined twice")
        XCTAssertEqual(refusal("v = { a = 1 b = 2 }"), "expected ',' or '}' in an inline table, found 'b'")
    }

    func testKeys() throws {
        let root = try TOMLParser.parse("""
        bare-key_1 = 1
        "quoted \\u00e9" = 2
        'literal \\n' = 3
        a . b . "c.d" = 4
        "" = 5
        1234 = 6
        """)
        guard case .integer(1)? = root["bare-key_1"], case .integer(2)? = root["quoted é"], case .integer(3)? = root["literal \\n"],
              case let .table(a)? = root["a"], case let .table(b)? = a["b"], case .integer(4)? = b["c.d"],
              case .integer(5)? = root[""], case .integer(6)? = root["1234"]
        else { return XCTFail("\(root)") }
        XCTAssertEqual(refusal("a b = 1"), "expected '=' after the key a, found 'b'")
        XCTAssertEqual(refusal("é = 1"), "expected a key (letters, digits, '_' and '-', or a quoted string), found 'é'")
        XCTAssertEqual(refusal("'''a''' = 1"), "a key cannot be a multi-line string")
        XCTAssertEqual(refusal("a = 1 b = 2"), "expected the end of the line, found 'b'")
    }
}
