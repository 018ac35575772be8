@testable import Config
import SplitMix
import XCTest

/// Each bound of ``TOMLInputLimits`` at and just past it, and byte mutations of the
/// shipped example: never a crash, a hang or a line outside the text.
final class TOMLParserLimitAndFuzzTests: XCTestCase {
    private func limit(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try TOMLParser.parse(text)
            XCTFail("parsed", file: file, line: line)
            return ""
        } catch {
            XCTAssertEqual(error.kind, .inputLimit, file: file, line: line)
            return "\(error.line): \(error.key): \(error.message)"
        }
    }

    func testLineLength() throws {
        _ = try TOMLParser.parse("a = '\(String(repeating: "x", count: 4_096 - 6))'\n")
        _ = try TOMLParser.parse("# \(String(repeating: "x", count: 4_094))")
        XCTAssertEqual(limit("a = 1\n# \(String(repeating: "x", count: 4_095))"), "2: a: line is 4097 bytes long; at most 4096 are allowed")
        XCTAssertEqual(limit("a = '''\n\(String(repeating: "x", count: 5_000))\n'''"), "2: a: line is 5000 bytes long; at most 4096 are allowed")
    }

    func testKeyParts() throws {
        let sixteen = Array(repeating: "k", count: 16).joined(separator: ".")
        _ = try TOMLParser.parse("\(sixteen) = 1\n")
        _ = try TOMLParser.parse("[\(sixteen)]\n")
        XCTAssertEqual(limit("x = 1\n\(sixteen).k = 1\n"), "2: \(sixteen)…: key has more than 16 dotted parts")
        XCTAssertEqual(limit("[\(sixteen) . k]\n"), "1: \(sixteen)…: key has more than 16 dotted parts")
        XCTAssertEqual(limit("v = { \(sixteen).k = 1 }\n"), "1: \(sixteen)…: key has more than 16 dotted parts")
    }

    func testNesting() throws {
        _ = try TOMLParser.parse("a = \(String(repeating: "[", count: 16))\(String(repeating: "]", count: 16))\n")
        _ = try TOMLParser.parse("a = \(String(repeating: "{b=", count: 15))[1]\(String(repeating: "}", count: 15))\n")
        XCTAssertEqual(limit("a = \(String(repeating: "[", count: 17))"), "1: a: arrays and inline tables are nested more than 16 deep")
        XCTAssertEqual(limit("a = \(String(repeating: "[{c=", count: 9))"), "1: c: arrays and inline tables are nested more than 16 deep")
        // A million brackets: refused at the 17th, no deeper.
        XCTAssertEqual(limit("a = \(String(repeating: "[", count: 1_000_000))"), "1: a: arrays and inline tables are nested more than 16 deep")
    }

    func testArrayElements() throws {
        let full = Array(repeating: "1", count: 4_096).joined(separator: ",\n")
        _ = try TOMLParser.parse("a = [\(full)]\n")
        XCTAssertEqual(limit("a = [\n\(full),\n2]"), "4098: a: array has more than 4096 elements")
        // Arrays of tables are not inline arrays.
        let root = try TOMLParser.parse(String(repeating: "[[p]]\n", count: 5_000))
        guard case let .array(tables)? = root["p"] else { return XCTFail() }
        XCTAssertEqual(tables.count, 5_000)
    }

    /// Random byte edits of config/gateway.example.toml, a few thousand files.
    func testMutatedExampleNeverCrashesOrHangs() throws {
        let root = URLPath.packageRoot(from: #filePath)
        let example = try SystemFileSystem().read(root + "/config/gateway.example.toml", limit: 1 << 20).bytes
        let alphabet = Array("[]{}\"'=.,#\n\r \\az09_-+:eExob\t".utf8) + [0xC3, 0xA9, 0x00, 0x01, 0x7F]
        var generator = SplitMix64(seed: 7)
        var parsed = 0
        for _ in 0 ..< 3_000 {
            var bytes = example
            for _ in 0 ..< 1 + Int(generator.next() % 8) {
                let at = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 5 {
                case 0: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                case 2: bytes.remove(at: at)
                case 3: bytes[at] = UInt8(truncatingIfNeeded: generator.next())
                default:
                    let chunk = Array(bytes[at ..< min(bytes.count, at + Int(generator.next() % 200))])
                    bytes.insert(contentsOf: chunk, at: Int(generator.next() % UInt64(bytes.count)))
                }
            }
            // The loader refuses invalid UTF-8 before parsing; the parser sees what it would.
            let text = String(decoding: bytes, as: UTF8.self)
            let lineCount = text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            do {
                _ = try TOMLParser.parse(text)
                parsed += 1
                _ = SourceIndex(text: text)
            } catch {
                XCTAssertTrue((1 ... lineCount).contains(error.line), "\(error)")
                XCTAssertFalse(error.message.isEmpty)
                XCTAssertLessThanOrEqual(error.key.utf8.count, 68)
            }
        }
        XCTAssertGreaterThan(parsed, 0)
    }
}
