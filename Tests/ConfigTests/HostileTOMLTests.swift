import Config
import ConfigFuzz
import XCTest

/// Files crafted to crash or stall the parser get a clear error naming file, line and key,
/// as the parser reads them; and generated files of hostile structure never crash it.
final class HostileTOMLTests: XCTestCase {
    private let file = "/etc/beacon-gateway/gateway.toml"

    private func issues(_ text: String) -> [ConfigIssue] {
        do {
            _ = try GatewayConfiguration.parse(text: text, file: file, fileSystem: InMemoryFileSystem())
            XCTFail("loaded")
            return []
        } catch {
            return error.issues
        }
    }

    func testADottedKeyOfFiftyThousandPartsIsRefused() {
        let key = Array(repeating: "a", count: 50_000).joined(separator: ".")
        let found = issues("[gateway]\nid = \"door-1\"\n\(key) = 1\n")
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.line, 3)
        XCTAssertEqual(found.first?.key, "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a…")
        XCTAssertEqual(found.first?.message, "key has more than 16 dotted parts")
    }

    func testATableHeaderOfFortyThousandPartsIsRefused() {
        let name = Array(repeating: "t", count: 40_000).joined(separator: ".")
        let found = issues("[gateway]\nid = \"door-1\"\n\n[\(name)]\nk = 1\n")
        XCTAssertEqual(found.map(\.description), ["\(file):4: t.t.t.t.t.t.t.t.t.t.t.t.t.t.t.t…: key has more than 16 dotted parts"])
    }

    func testDeepNestingHugeArraysAndLongLinesAreRefused() {
        XCTAssertEqual(issues("x = " + String(repeating: "[", count: 100_000)).map(\.description),
                       ["\(file):1: x: arrays and inline tables are nested more than 16 deep"])
        XCTAssertEqual(issues("x = " + String(repeating: "{a=", count: 30)).map(\.description),
                       ["\(file):1: a: arrays and inline tables are nested more than 16 deep"])
        let elements = (0 ..< 5_000).map { "\($0)" }.joined(separator: ",\n")
        XCTAssertEqual(issues("[gateway]\nrssi = [\n\(elements)]\n").map(\.description),
                       ["\(file):4099: rssi: array has more than 4096 elements"])
        XCTAssertEqual(issues("# comment\nname = \"\(String(repeating: "x", count: 5_000))\"\n").map(\.description),
                       ["\(file):2: name: line is 5009 bytes long; at most 4096 are allowed"])
    }

    func testQuotedDotsAndStringsDoNotCount() {
        // Dots, brackets and commas inside strings and quoted keys are text, not structure:
        // what is left to say is about the values, not about the limits.
        let text = """
        [gateway]
        id = "door-1"
        site = "[[[[[[[[[[[[[[[[[[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r ]]]]"
        "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q" = 1
        door = '''
        {{{{{{{{{{{{{{{{{{{{{{
        '''
        """
        XCTAssertEqual(issues(text).map(\.description), [
            #"\#(file):4: gateway."a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q": unknown key (known here: id, site, door, state_dir, log_level)"#,
            #"\#(file):5: gateway.door: must be 1 to 128 characters without control characters, got "{{{{{{{{{{{{{{{{{{{{{{\u{a}""#,
        ])
    }

    func testInvalidUTF8AndNULBytesAreRefusedByLoad() {
        var fileSystem = InMemoryFileSystem()
        fileSystem.files[file] = FileSnapshot(permissions: 0o600, bytes: Array("[gateway]\nid = \"d\"\nsite = \"".utf8) + [0xC3, 0x28, 0x22])
        fileSystem.files["/nul.toml"] = FileSnapshot(permissions: 0o600, bytes: Array("[gateway]\nid = \"d\"\n".utf8) + [0, 0x41])
        XCTAssertThrowsError(try GatewayConfiguration.load(path: file, fileSystem: fileSystem)) { error in
            XCTAssertEqual("\(error)", "\(file):3: the configuration file is not valid UTF-8 text")
        }
        XCTAssertThrowsError(try GatewayConfiguration.load(path: "/nul.toml", fileSystem: fileSystem)) { error in
            XCTAssertEqual("\(error)", "/nul.toml:3: contains a NUL byte; is this a text file?")
        }
    }

    /// Generated files of hostile structure (Benchmarks/ConfigFuzz) through the whole parse:
    /// none may crash or break the issue contract. A few seconds here (cases up to 64 KiB;
    /// the extremes above have their own tests); scripts/fuzz-config runs a million of
    /// every size in release and reports the time and the slowest case.
    func testGeneratedHostileStructureNeverCrashes() {
        let summary = runConfigFuzz(cases: 2_000, seed: 42, maximumCaseBytes: 64 * 1_024)
        print("config fuzz: \(summary.description)")
        XCTAssertEqual(summary.violations, [])
        XCTAssertGreaterThan(summary.loaded, 0, "the generator also makes valid files")
        XCTAssertGreaterThan(summary.refusedByLimits, 0, "and files past the limits")
    }
}
