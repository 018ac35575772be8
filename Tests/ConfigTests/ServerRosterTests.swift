import Advertisements
import Config
import XCTest

/// `[server] roster` / `roster_poll_s`, and a server roster validated by the rules of
/// `[[person]]` with JSON paths in its messages (see docs/fleet.md).
final class ServerRosterTests: XCTestCase {
    private static let fileText = """
    [gateway]
    id = "door-1"
    [server]
    url = "https://example.org"
    roster = true
    roster_poll_s = 2.5
    [[person]]
    id = "u_file"
      [[person.tag]]
      id = "tag-file"
      address = "C0:11:22:33:44:55"
    """

    private func configuration(_ text: String = fileText) throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: standardFileSystem())
    }

    private func validate(_ json: String, file: GatewayConfiguration? = nil) throws -> Result<ServerRoster, ServerRosterError> {
        ServerRoster.validate(Array(json.utf8), alongside: try file ?? configuration())
    }

    private func assertRefused(_ json: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
        switch try validate(json) {
        case let .success(roster): XCTFail("accepted: \(roster)", file: file, line: line)
        case let .failure(error): XCTAssertEqual(error.description, expected, file: file, line: line)
        }
    }

    // MARK: Keys

    func testRosterKeysAndTheirDefaults() throws {
        let config = try configuration()
        XCTAssertEqual(config.server?.roster, true)
        XCTAssertEqual(config.server?.rosterPollInterval, .milliseconds(2500))
        XCTAssertTrue(config.renderEffective().contains("roster = true\nroster_poll_s = 2.5\n"), config.renderEffective())
        let plain = try configuration("[gateway]\nid = \"d\"\n[server]\nurl = \"https://example.org\"\n")
        XCTAssertEqual(plain.server?.roster, false)
        XCTAssertEqual(plain.server?.rosterPollInterval, .seconds(60))
    }

    func testRosterKeysWrongTypeOrRangeNameFileLineAndKey() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        roster = "yes"
        roster_poll_s = 0.5
        """, [
            "gateway.toml:5: server.roster: must be true or false, got string",
            "gateway.toml:6: server.roster_poll_s: must be between 1 and 86400 (seconds), got 0.5",
        ])
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org"
        roster_poll_s = "60"
        """, [
            "gateway.toml:5: server.roster_poll_s: must be a number (seconds), got string",
        ])
    }

    // MARK: Valid rosters

    func testAValidRosterWithEveryFieldMergesBesideTheFile() throws {
        let json = """
        {"revision": "r-42", "mode": "paused",
         "persons": [
           {"id": "u_1001", "name": "Aiko", "requireProof": true,
            "tags": [{"id": "tag-1001", "ibeacon": "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1",
                      "eddystoneUid": "00112233445566778899:aabbccddeeff", "irk": "00112233445566778899aabbccddeeff",
                      "key": "\(String(repeating: "ab", count: 32))", "track": "advertising"}]},
           {"id": "u_1002", "tags": [{"id": "tag-1002", "address": "C0:11:22:33:44:66"}]}]}
        """
        let roster = try validate(json).get()
        XCTAssertEqual(roster.revision, "r-42")
        XCTAssertEqual(roster.mode, .paused)
        XCTAssertEqual(roster.persons.map(\.id), ["u_1001", "u_1002"])
        XCTAssertEqual(roster.persons[0].name, "Aiko")
        XCTAssertTrue(roster.persons[0].requireProof)
        XCTAssertEqual(roster.persons[0].tags[0].identities.count, 3, "ibeacon, eddystoneUid and irk")
        XCTAssertEqual(roster.persons[0].tags[0].track, .advertising)
        XCTAssertEqual(roster.persons[0].tags[0].key, [UInt8](repeating: 0xAB, count: 32))
        let merged = try configuration().merging(roster)
        XCTAssertEqual(merged.persons.map(\.id), ["u_file", "u_1001", "u_1002"])
    }

    func testModeDefaultsToActiveAndAnEmptyRosterIsValid() throws {
        let roster = try validate(#"{"revision": "r-1", "persons": []}"#).get()
        XCTAssertEqual(roster.mode, .active)
        XCTAssertEqual(roster.persons, [])
    }

    // MARK: Refusals, with JSON paths

    func testAnInvalidIdentityNamesTheRevisionAndTheJSONPath() throws {
        let persons = (0 ..< 4).map { index in
            let ibeacon = index == 3 ? "not-a-beacon" : "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\(index)"
            return #"{"id": "u_\#(index)", "tags": [{"id": "t-\#(index)", "ibeacon": "\#(ibeacon)"}]}"#
        }
        try assertRefused(#"{"revision": "r-43", "persons": [\#(persons.joined(separator: ","))]}"#,
                          #"r-43: persons[3].tags[0].ibeacon: must be "UUID:MAJOR:MINOR" with a 36-character UUID and MAJOR, MINOR in 0…65535, e.g. "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1", got "not-a-beacon""#)
    }

    func testCamelCaseKeysOnlyAndUnknownKeysAreRefused() throws {
        try assertRefused(#"{"revision": "r-2", "persons": [{"id": "u", "require_proof": true, "tags": [{"id": "t", "address": "C0:11:22:33:44:77"}]}]}"#,
                          "r-2: persons[0].require_proof: unknown key; did you mean `requireProof`?")
        try assertRefused(#"{"revision": "r-2", "persons": [{"id": "u", "tags": [{"id": "t", "eddystone_uid": "00112233445566778899:aabbccddeeff"}]}]}"#,
                          "r-2: persons[0].tags[0]: a tag needs at least one identity: ibeacon, eddystoneUid, address or irk (and 1 more)")
    }

    func testAnIdAlsoInTheFileMakesTheRosterInvalid() throws {
        try assertRefused(#"{"revision": "r-3", "persons": [{"id": "u_file", "tags": [{"id": "t-3", "address": "C0:11:22:33:44:88"}]}]}"#,
                          #"r-3: persons[0].id: duplicate person id "u_file", already used by person[1] of the configuration file"#)
        try assertRefused(#"{"revision": "r-3", "persons": [{"id": "u_3", "tags": [{"id": "t-3", "address": "C0:11:22:33:44:55"}]}]}"#,
                          "r-3: persons[0].tags[0].address: the same address is already configured for person[1].tag[1] of the configuration file; a tag must be recognisable on its own")
        try assertRefused(#"{"revision": "r-3", "persons": [{"id": "a", "tags": [{"id": "t", "address": "C0:11:22:33:44:01"}]}, {"id": "a", "tags": [{"id": "t2", "address": "C0:11:22:33:44:02"}]}]}"#,
                          #"r-3: persons[1].id: duplicate person id "a", already used by persons[0]"#)
    }

    func testRequireProofWithoutAKeyOrMasterKeyIsRefused() throws {
        try assertRefused(#"{"revision": "r-4", "persons": [{"id": "u", "requireProof": true, "tags": [{"id": "t", "address": "C0:11:22:33:44:99"}]}]}"#,
                          #"r-4: persons[0].tags[0]: person "u" requires proof, but this tag has no key = "…64 hex digits…" and there is no [security] master_key_file to derive one from"#)
    }

    func testStructureAndSyntaxProblems() throws {
        try assertRefused(#"{"persons": []}"#, "revision: required key is missing")
        try assertRefused(#"{"revision": "r-5", "mode": "off", "persons": []}"#, #"r-5: mode: must be "active" or "paused", got "off""#)
        try assertRefused(#"{"revision": "r-5"}"#, "r-5: persons: required key is missing")
        try assertRefused(#"{"revision": "r-5", "persons": [1], "extra": null}"#,
                          "r-5: persons[0]: must be a table (write [[person]]), got integer (and 1 more)")
        try assertRefused(#"{"revision": "r-5", "persons": [{"id": null, "tags": []}]}"#,
                          "r-5: persons[0].id: must be a string, got null (and 1 more)")
        try assertRefused("[]", "the roster must be a JSON object, got array")
        try assertRefused(#"{"revision": "r-6", "persons": [}"#, "JSON syntax error at byte 32: a value was expected")
        try assertRefused(#"{"revision": "a", "revision": "b", "persons": []}"#,
                          #"JSON syntax error at byte 18: the key "revision" appears twice in one object"#)
        try assertRefused(String(repeating: "[", count: 40), "JSON syntax error at byte 32: nested more than 32 deep")
    }

    func testJSONStringsEscapesAndNumbers() throws {
        let roster = try validate(#"{"revision": "r\u002d7 \ud83d\ude00", "persons": [{"id": "u", "name": "A\"\\\/\n", "tags": [{"id": "t", "address": "C0:11:22:33:44:10"}]}]}"#)
        // A name with a line break is not valid text: refused like in the file.
        guard case let .failure(error) = roster else { return XCTFail("a control character in a name was accepted") }
        XCTAssertEqual(error.revision, "r-7 😀")
        XCTAssertTrue(error.description.hasPrefix("r-7 😀: persons[0].name: must be 1 to 128 characters without control characters"), error.description)
        try assertRefused(#"{"revision": "r-8", "persons": [], "x": -1.5e3}"#, "r-8: x: unknown key (known here: revision, mode, persons)")
        try assertRefused(#"{"revision": "r-8", "persons": [], "x": 01}"#, "JSON syntax error at byte 41: ',' or '}' was expected")
    }

    func testAnInvalidIRKIsNeverEchoed() throws {
        let irk = "00112233445566778899aabbccddeeZZ"
        switch try validate(#"{"revision": "r-9", "persons": [{"id": "u", "tags": [{"id": "t", "irk": "\#(irk)"}]}]}"#) {
        case .success: XCTFail("an invalid IRK was accepted")
        case let .failure(error):
            XCTAssertTrue(error.description.hasPrefix("r-9: persons[0].tags[0].irk: must be"), error.description)
            XCTAssertFalse(error.description.contains(irk))
        }
    }

    // MARK: The connection rule

    /// A kept-open connection goes to whatever advertises the tag's address: a server roster
    /// may not ask for one, whether or not its person requires proof (docs/fleet.md).
    func testTrackConnectionIsRefusedFromTheServerAndNamedByItsPath() throws {
        let connectionTag = #"{"id": "t-2", "address": "C0:11:22:33:44:22", "track": "connection"}"#
        try assertRefused(#"{"revision": "r-11", "persons": [{"id": "u_1", "tags": [{"id": "t-1", "address": "C0:11:22:33:44:21"}, \#(connectionTag)]}]}"#,
                          #"r-11: persons[0].tags[1].track: must be "advertising" in a server roster: "connection" keeps a connection open to any device that advertises the tag's address, so only the configuration file may ask for it"#)
        let provable = #"{"id": "t-2", "address": "C0:11:22:33:44:22", "track": "connection", "key": "\#(String(repeating: "ab", count: 32))"}"#
        switch try validate(#"{"revision": "r-12", "persons": [{"id": "u_2", "requireProof": true, "tags": [\#(provable)]}]}"#) {
        case .success: XCTFail("a proof-requiring person's connection-tracked tag was accepted from the server")
        case let .failure(error): XCTAssertTrue(error.description.hasPrefix("r-12: persons[0].tags[0].track: must be \"advertising\""), error.description)
        }
        // The file itself still may.
        let file = try configuration(Self.fileText + "\n  track = \"connection\"\n")
        XCTAssertEqual(file.persons[0].tags[0].track, .connection)
        XCTAssertEqual(try validate(#"{"revision": "r-13", "persons": [{"id": "u_3", "tags": [{"id": "t-3", "address": "C0:11:22:33:44:23", "track": "advertising"}]}]}"#, file: file).get().persons.count, 1)
    }

    // MARK: Limits, checked while the document is read

    /// What a roster holds of `count` persons with one tag each, from `first` on.
    private func persons(_ count: Int, from first: Int = 0) -> String {
        (first ..< first + count).map { index in
            let address = String(format6: index)
            return #"{"id": "u_\#(index)", "tags": [{"id": "t_\#(index)", "address": "\#(address)"}]}"#
        }.joined(separator: ",")
    }

    func testFourMiBOfEmptyPersonsIsRefusedAtTheFirstPersonPastTheLimit() throws {
        let head = #"{"revision": "r-big", "persons": ["#
        let count = (ServerRoster.maximumSize - head.utf8.count - 2) / 3
        var body = Array(head.utf8)
        body.reserveCapacity(ServerRoster.maximumSize)
        for index in 0 ..< count { body += index == 0 ? Array("{}".utf8) : Array(",{}".utf8) }
        body += Array("]}".utf8)
        XCTAssertLessThanOrEqual(body.count, ServerRoster.maximumSize)
        XCTAssertGreaterThan(count, 1_000_000)
        switch ServerRoster.validate(body, alongside: try configuration()) {
        case .success: XCTFail("accepted")
        case let .failure(error): XCTAssertEqual(error.description, "persons[20000]: a roster holds at most 20,000 persons")
        }
    }

    func testTheMostPersonsAreAcceptedAndOneMoreIsRefused() throws {
        XCTAssertEqual(ServerRoster.Limits.persons, 20_000)
        let most = #"{"revision": "r-20k", "persons": [\#(persons(20_000))]}"#
        XCTAssertLessThan(most.utf8.count, ServerRoster.maximumSize)
        XCTAssertEqual(try validate(most).get().persons.count, 20_000)
        try assertRefused(#"{"revision": "r-20k1", "persons": [\#(persons(20_001))]}"#,
                          "persons[20000]: a roster holds at most 20,000 persons")
    }

    func testTagsStringsKeysAndOtherArraysAreBoundedWithThePathOfTheFirstExcess() throws {
        let tag = #"{"id": "t", "address": "C0:11:22:33:44:01"}"#
        let seventeen = Array(repeating: tag, count: 17).joined(separator: ",")
        try assertRefused(#"{"revision": "r-1", "persons": [\#(persons(3)), {"id": "u", "tags": [\#(seventeen)]}]}"#,
                          "persons[3].tags[16]: a person holds at most 16 tags")
        let long = String(repeating: "x", count: 1_025)
        try assertRefused(#"{"revision": "r-2", "persons": [\#(persons(3)), {"id": "u", "tags": [\#(tag), {"id": "\#(long)"}]}]}"#,
                          "persons[3].tags[1].id: a string holds at most 1024 bytes")
        // Escapes count as written: 342 × `\u0041` is 2,052 bytes for 342 characters.
        let escaped = String(repeating: #"\u0041"#, count: 342)
        try assertRefused(#"{"revision": "r-3", "persons": [{"id": "\#(escaped)"}]}"#,
                          "persons[0].id: a string holds at most 1024 bytes")
        try assertRefused(#"{"revision": "r-4", "persons": [{"\#(long)": 1}]}"#,
                          "persons[0]: a string holds at most 1024 bytes")
        let keys = (0 ..< 17).map { #""k\#($0)": 0"# }.joined(separator: ",")
        try assertRefused(#"{"revision": "r-5", "persons": [{\#(keys)}]}"#, "persons[0].k16: an object holds at most 16 keys")
        let zeros = Array(repeating: "0", count: 17).joined(separator: ",")
        try assertRefused(#"{"revision": "r-6", "persons": [{"id": "u", "x": [\#(zeros)]}]}"#,
                          "persons[0].x[16]: an array here holds at most 16 elements")
        // A string exactly at the limit is read (and then refused by the rules of an id).
        let atLimit = String(repeating: "x", count: 1_024)
        try assertRefused(#"{"revision": "r-7", "persons": [], "\#(atLimit)": 1}"#,
                          #"r-7: "\#(String(repeating: "x", count: 64))…": unknown key (known here: revision, mode, persons)"#)
    }

    /// Values in all: persons of 16 keys holding 16 numbers each pass every other limit.
    func testTheValuesOfAWholeRosterAreBounded() throws {
        let person = "{" + (0 ..< 16).map { key in
            #""k\#(key)": ["# + Array(repeating: "0", count: 16).joined(separator: ",") + "]"
        }.joined(separator: ",") + "}"
        let body = #"{"revision": "r-v", "persons": ["# + Array(repeating: person, count: 2_000).joined(separator: ",") + "]}"
        XCTAssertLessThan(body.utf8.count, ServerRoster.maximumSize)
        // 3 values before the first person, 1 + 16 × 17 in each: the 300,001st is in person
        // 1098, its 244th value: key 14's array's 5th value, element 3.
        XCTAssertEqual(3 + 273 * 1098 + 1 + 17 * 14 + 5, 300_001)
        try assertRefused(body, "persons[1098].k14[3]: a roster holds at most 300,000 JSON values")
    }

    /// Tags in all: 16 for each of 2,500 persons is the most.
    func testTheTagsOfAWholeRosterAreBounded() throws {
        let person = #"{"tags": ["# + Array(repeating: "{}", count: 16).joined(separator: ",") + "]}"
        let body = #"{"revision": "r-t", "persons": ["# + Array(repeating: person, count: 2_501).joined(separator: ",") + "]}"
        try assertRefused(body, "persons[2500].tags[0]: a roster holds at most 40,000 tags")
    }

    /// Hostile bytes: every mutation of a valid roster is either valid or refused with a
    /// message; none crashes or hangs.
    func testMutatedRostersAreAcceptedOrRefusedWithAMessage() throws {
        let file = try configuration()
        let valid = Array(#"{"revision": "r-1", "mode": "paused", "persons": [{"id": "u_1", "name": "A\u00e9", "requireProof": false, "tags": [{"id": "t-1", "ibeacon": "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2", "track": "advertising"}]}]}"#.utf8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let alphabet = Array(#"{}[]",:\ 0123456789-eE.truefalsnul"#.utf8) + [0x00, 0x0A, 0xC3, 0xFF]
        var accepted = 0
        for _ in 0 ..< 3000 {
            var bytes = valid
            for _ in 0 ..< 1 + next() % 4 {
                let position = next() % bytes.count
                switch next() % 3 {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[next() % alphabet.count], at: position)
                default: bytes[position] = alphabet[next() % alphabet.count]
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            switch ServerRoster.validate(bytes, alongside: file) {
            case .success: accepted += 1
            case let .failure(error): XCTAssertFalse(error.description.isEmpty)
            }
        }
        XCTAssertLessThan(accepted, 3000, "the mutations break some rosters")
    }
}

private extension String {
    /// A static random address (the two top bits set) made of `index`.
    init(format6 index: Int) {
        let bytes = [0xC0, 0x00, 0x00, (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF]
        self = bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }
}
