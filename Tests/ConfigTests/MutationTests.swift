import Config
import ConfigFuzz
import SplitMix
import XCTest

/// Near-valid files: the full example with a few random edits. Whatever the edits, the
/// result is a configuration or issues pointing inside the file, never a trap or an abort
/// inside the parser.
final class MutationTests: XCTestCase {
    func testRandomEditsOfAValidFileNeverCrash() {
        var generator = SplitMix64(seed: 11)
        let base = Array(ValidConfigurationTests.full.utf8)
        let alphabet = Array("[]{}\"'=.,#\n \\az09_-+:\t".utf8) + [0xC3, 0xA9, 0x01, 0x7F]
        let fileSystem = ValidConfigurationTests.fileSystem
        var loaded = 0
        for _ in 0 ..< 1500 {
            var bytes = base
            for _ in 0 ..< 1 + Int(generator.next() % 4) {
                guard !bytes.isEmpty else { break }
                let at = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 4 {
                case 0: bytes[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                case 2: bytes.remove(at: at)
                default:
                    let chunk = Array(bytes[at ..< min(bytes.count, at + Int(generator.next() % 40))])
                    bytes.insert(contentsOf: chunk, at: Int(generator.next() % UInt64(bytes.count)))
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
            do {
                _ = try GatewayConfiguration.parse(text: text, file: "/etc/beacon-gateway/gateway.toml", fileSystem: fileSystem)
                loaded += 1
            } catch {
                XCTAssertFalse(error.issues.isEmpty)
                for issue in error.issues {
                    XCTAssertTrue((0 ... lineCount).contains(issue.line), "\(issue)\n\(text)")
                    XCTAssertFalse(issue.message.isEmpty)
                }
                XCTAssertEqual(error.issues.map(\.line), error.issues.map(\.line).sorted())
            }
        }
        // Some edits (in comments-free values, e.g. a digit) leave a valid file.
        XCTAssertGreaterThan(loaded, 0)
    }
}
