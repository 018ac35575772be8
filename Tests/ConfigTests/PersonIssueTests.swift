import Config
import XCTest

/// `[[person]]` and `[[person.tag]]`: ids, identities, keys and the rules across them.
final class PersonIssueTests: XCTestCase {
    func testDuplicatePersonIDs() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "t1"
          address = "C0:11:22:33:44:55"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "t2"
          address = "C0:11:22:33:44:56"
        """, [
            #"gateway.toml:9: person[2].id: duplicate person id "u_1", already used by person[1]"#,
        ])
    }

    func testDuplicateTagIDsAcrossPersons() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"
          address = "C0:11:22:33:44:55"
        [[person]]
        id = "u_2"
          [[person.tag]]
          id = "tag-2"
          address = "C0:11:22:33:44:56"
          [[person.tag]]
          id = "tag-1"
          address = "C0:11:22:33:44:57"
        """, [
            #"gateway.toml:14: person[2].tag[2].id: duplicate tag id "tag-1", already used by person[1].tag[1]"#,
        ])
    }

    func testSameIdentityOnTwoTags() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"
          ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1"
          [[person.tag]]
          id = "tag-2"
          ibeacon = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:100:1"
        """, [
            "gateway.toml:10: person[1].tag[2].ibeacon: the same ibeacon is already configured for person[1].tag[1]; a tag must be recognisable on its own",
        ])
    }

    func testTagWithoutIdentity() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"
          track = "connection"
        """, [
            "gateway.toml:5: person[1].tag[1]: a tag needs at least one identity: ibeacon, eddystone_uid, address or irk",
        ])
    }

    func testPersonWithoutTagsAndWithoutID() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        name = "Nobody"
        """, [
            "gateway.toml:3: person[1].id: required key is missing",
            "gateway.toml:3: person[1]: a person needs at least one tag ([[person.tag]] with an id and an identity)",
        ])
    }

    func testTagWithoutID() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          address = "C0:11:22:33:44:55"
        """, [
            "gateway.toml:5: person[1].tag[1].id: required key is missing",
        ])
    }

    func testMalformedIdentities() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"
          ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:70000"
          eddystone_uid = "edd1ebeac04e5defa017"
          address = "C0:11:22:33:44"
          irk = "00112233445566778899aabbccddeeXX"
        """, [
            #"gateway.toml:7: person[1].tag[1].ibeacon: must be "UUID:MAJOR:MINOR" with a 36-character UUID and MAJOR, MINOR in 0…65535, e.g. "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1", got "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:70000""#,
            #"gateway.toml:8: person[1].tag[1].eddystone_uid: must be "NAMESPACE:INSTANCE" in hex, 20 and 12 digits, e.g. "edd1ebeac04e5defa017:0123456789ab", got "edd1ebeac04e5defa017""#,
            #"gateway.toml:9: person[1].tag[1].address: must be a Bluetooth address "AA:BB:CC:DD:EE:FF", got "C0:11:22:33:44""#,
            // The IRK is a secret: its value is not repeated.
            "gateway.toml:10: person[1].tag[1].irk: must be 32 hex digits (a 128-bit identity resolving key)",
        ])
    }

    func testMalformedTagKeyIsNotEchoed() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"
          address = "C0:11:22:33:44:55"
          key = "secretsecretsecret"
          track = "link"
        """, [
            "gateway.toml:8: person[1].tag[1].key: must be 64 hex digits (the tag's 256-bit proof key)",
            #"gateway.toml:9: person[1].tag[1].track: must be "advertising" or "connection", got "link""#,
        ])
    }

    func testRequireProofWithoutAnyKey() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
        require_proof = true
          [[person.tag]]
          id = "tag-1"
          address = "C0:11:22:33:44:55"
          [[person.tag]]
          id = "tag-2"
          address = "C0:11:22:33:44:56"
          key = "\(ValidConfigurationTests.tagKeyHex)"
        """, [
            #"gateway.toml:6: person[1].tag[1]: person "u_1" requires proof, but this tag has no key = "…64 hex digits…" and there is no [security] master_key_file to derive one from"#,
        ])
    }

    func testRequireProofWithMasterKeyNeedsNoTagKey() throws {
        let config = try GatewayConfiguration.parse(text: """
        [gateway]
        id = "door-1"
        [security]
        master_key_file = "/etc/bg/master.key"
        [[person]]
        id = "u_1"
        require_proof = true
          [[person.tag]]
          id = "tag-1"
          address = "C0:11:22:33:44:55"
        """, file: "gateway.toml", fileSystem: standardFileSystem())
        XCTAssertEqual(config.persons.first?.tags.first?.key, nil)
        XCTAssertEqual(config.security.masterKey?.count, 32)
    }

    func testPersonWrittenAsPlainTable() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [person]
        id = "u_1"
        """, [
            "gateway.toml:3: person: must be an array of tables (write [[person]]), got table",
        ])
    }

    func testTagWrittenAsPlainTable() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [person.tag]
          id = "t"
          address = "C0:11:22:33:44:55"
        """, [
            "gateway.toml:5: person[1].tag: must be an array of tables (write [[person.tag]]), got table",
        ])
    }

    func testTypoInTagKeyInSecondPerson() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "t1"
          address = "C0:11:22:33:44:55"
        [[person]]
        id = "u_2"
          [[person.tag]]
          id = "t2"
          adress = "C0:11:22:33:44:56"
        """, [
            "gateway.toml:10: person[2].tag[1]: a tag needs at least one identity: ibeacon, eddystone_uid, address or irk",
            "gateway.toml:12: person[2].tag[1].adress: unknown key; did you mean `address`?",
        ])
    }
}
