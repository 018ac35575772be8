import Config
import ConfigFuzz
import SplitMix
import XCTest

/// Text the TOML parser refuses: one issue, at the parser's line.
final class SyntaxIssueTests: XCTestCase {
    private func syntaxIssue(_ text: String) throws -> ConfigIssue {
        do {
            _ = try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: InMemoryFileSystem())
        } catch {
            XCTAssertEqual(error.issues.count, 1)
            return try XCTUnwrap(error.issues.first)
        }
        throw XCTSkip("parsed unexpectedly")
    }

    func testUnterminatedStringIsOneIssueAtItsLine() throws {
        let issue = try syntaxIssue("""
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = -70
        exit_rssi = "-75
        window_s = 3
        """)
        XCTAssertEqual(issue.file, "gateway.toml")
        XCTAssertEqual(issue.line, 5)
        XCTAssertEqual(issue.key, "")
        XCTAssertTrue(issue.message.hasPrefix("TOML syntax error: "), issue.message)
        XCTAssertTrue(issue.description.hasPrefix("gateway.toml:5: TOML syntax error: "), issue.description)
    }

    func testDuplicateKeyIsASyntaxError() throws {
        let issue = try syntaxIssue("""
        [gateway]
        id = "door-1"
        id = "door-2"
        """)
        XCTAssertEqual(issue.line, 3)
        XCTAssertTrue(issue.message.hasPrefix("TOML syntax error: "), issue.message)
    }

    func testMissingValue() throws {
        let issue = try syntaxIssue("""
        [gateway]
        id =
        """)
        XCTAssertEqual(issue.line, 2)
    }

    func testNULByteIsRefusedBeforeTheParserSeesIt() {
        assertIssues("[gateway]\nid = \"door-1\"\n\u{0}[x]\n", [
            "gateway.toml:3: contains a NUL byte; is this a text file?",
        ])
    }

    func testMalformedTableHeadersAreIssuesNotCrashes() {
        // Headers without a name and brackets that do not match: each one issue at its line.
        for header in ["[=]", "[ [a]]", "[é]", "[[=]]", "[#]", "[\\]", "[.a]", "[[ {]]", "[,]"] {
            assertIssues("[gateway]\nid = \"g\"\n\n\(header)\n", [
                "gateway.toml:4: TOML syntax error: a table header needs a name after '[', e.g. [presence] or [[person]]",
            ])
        }
        for value in ["[}", "[1, }", "[[1], {a = [}]", "{a = 1]"] {
            assertIssues("[gateway]\nid = \"g\"\nsite = \(value)\n", [
                "gateway.toml:3: TOML syntax error: unbalanced brackets: a ']' or '}' does not match the '[' or '{' it closes",
            ])
        }
        assertIssues("[gateway]\nid = \"g\"\nsite = [\n  1,\n  }\n", [
            "gateway.toml:5: TOML syntax error: unbalanced brackets: a ']' or '}' does not match the '[' or '{' it closes",
        ])
        // Inside a multi-line array a line starting with `[` is a value, not a header.
        assertIssues("""
        [gateway]
        id = "g"
        log_level = [
          [{ a = 1 }],
        ]
        """, [
            "gateway.toml:3: gateway.log_level: must be a string, got array",
        ])
    }

    func testGarbageNeverCrashes() {
        // Whatever bytes come in, the result is a configuration or issues with lines
        // inside the text: never a trap.
        let pieces = ["[", "]", "[[", "]]", "\"", "'''", "\"\"\"", "=", "\n", "#", "person", "tag", ".",
                      "id", "1", "{", "}", ",", "gateway", " ", "\\", "é", "-70", "true"]
        var generator = SplitMix64(seed: 42)
        let bytes = Array("[]{}\"'=.,#\n \\az09_-+:é\t".unicodeScalars)
        for round in 0 ..< 6000 {
            var text = "[gateway]\nid = \"g\"\n"
            if round % 2 == 0 {
                for _ in 0 ..< Int(generator.next() % 30) {
                    text += pieces[Int(generator.next() % UInt64(pieces.count))]
                }
            } else {
                for _ in 0 ..< Int(generator.next() % 20) {
                    text.unicodeScalars.append(bytes[Int(generator.next() % UInt64(bytes.count))])
                }
            }
            let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
            do {
                _ = try GatewayConfiguration.parse(text: text, file: "f", fileSystem: InMemoryFileSystem())
            } catch {
                XCTAssertFalse(error.issues.isEmpty)
                for issue in error.issues {
                    XCTAssertTrue((0 ... lineCount).contains(issue.line), "\(issue) in \(text)")
                }
            }
        }
    }
}

