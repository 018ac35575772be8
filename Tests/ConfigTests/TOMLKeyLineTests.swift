@testable import Config
import XCTest

/// The line ``TOMLParser`` gives each key and header: what every issue's line comes from.
final class TOMLKeyLineTests: XCTestCase {
    private func path(_ parts: Any...) -> ConfigPath {
        ConfigPath(components: parts.map { part in
            if let ordinal = part as? Int { return .element(ordinal) }
            return .key(part as! String)
        })
    }

    func testNestedDottedInlineAndArrayOfTablesKeys() {
        let index = SourceIndex(text: """
        top = 1
        [gateway]
        id = "g"
        site.room = "301"

        [[person]]
        id = "a"
        [[person.tag]]
        id = "t1"
        [[person.tag]]
        id = "t2"
        ibeacon = { uuid = "u", major = 1 }
        [[person]]
        id = "b"
        list = [
          { k = 1 },
          { k = 2 },
        ]
        [person.extra]
        deep.er = true
        """)
        let expected: [(ConfigPath, Int)] = [
            (path("top"), 1), (path("gateway"), 2), (path("gateway", "id"), 3), (path("gateway", "site"), 4),
            (path("gateway", "site", "room"), 4), (path("person"), 6), (path("person", 1), 6), (path("person", 1, "id"), 7),
            (path("person", 1, "tag"), 8), (path("person", 1, "tag", 1), 8), (path("person", 1, "tag", 1, "id"), 9),
            (path("person", 1, "tag", 2), 10), (path("person", 1, "tag", 2, "id"), 11),
            (path("person", 1, "tag", 2, "ibeacon"), 12), (path("person", 1, "tag", 2, "ibeacon", "major"), 12),
            (path("person", 2), 13), (path("person", 2, "id"), 14), (path("person", 2, "list"), 15),
            (path("person", 2, "list", 1), 16), (path("person", 2, "list", 2, "k"), 17),
            (path("person", 2, "extra"), 19), (path("person", 2, "extra", "deep", "er"), 20),
            // Not written: the nearest written ancestor's line; nothing written at all: 0.
            (path("person", 2, "tag"), 13), (path("gateway", "missing"), 2), (path("nowhere"), 0),
        ]
        for (path, line) in expected {
            XCTAssertEqual(index.line(of: path), line, path.description)
        }
    }

    func testIssuesOnDottedAndInlineKeysNameTheirLines() {
        assertIssues("""
        [gateway]
        id = "g"

        [presence]
        enter_rssi = -70
        exit_rssi = { a = 1 }
        """, ["gateway.toml:6: presence.exit_rssi: must be an integer (dBm), got table"])
    }
}
