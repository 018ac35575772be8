import Config
import XCTest

/// Unknown keys, wrong types, out-of-range values and missing required keys.
final class KeyAndTypeIssueTests: XCTestCase {
    func testTypoInKeySuggestsTheKnownKey() {
        assertIssues("""
        [gateway]
        id = "door-1"

        [presence]
        enter_rsi = -70
        """, [
            "gateway.toml:5: presence.enter_rsi: unknown key; did you mean `enter_rssi`?",
        ])
    }

    func testTypoInTableNameSuggestsTheKnownTable() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presense]
        enter_rssi = -70
        """, [
            "gateway.toml:3: presense: unknown table; did you mean `presence`?",
        ])
    }

    func testUnknownKeyWithoutCloseMatchListsTheKnownKeys() {
        assertIssues("""
        [gateway]
        id = "door-1"
        colour = "blue"
        """, [
            "gateway.toml:3: gateway.colour: unknown key (known here: id, site, door, state_dir, log_level)",
        ])
    }

    func testStringWhereIntegerExpected() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = "-70"
        """, [
            "gateway.toml:4: presence.enter_rssi: must be an integer (dBm), got string",
        ])
    }

    func testFloatWhereIntegerExpected() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [bluetooth]
        max_connections = 2.5
        """, [
            "gateway.toml:4: bluetooth.max_connections: must be an integer, got float",
        ])
    }

    func testBooleanAndDateTypes() {
        assertIssues("""
        [gateway]
        id = 1979-05-27
        [leds]
        green = 1
        amber = 2
        red = 3
        active_low = "yes"
        """, [
            "gateway.toml:2: gateway.id: must be a string, got date",
            "gateway.toml:7: leds.active_low: must be true or false, got string",
        ])
    }

    func testTagIntervalOutOfRange() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [bluetooth]
        tag_interval_ms = 5
        max_connections = 9
        """, [
            "gateway.toml:4: bluetooth.tag_interval_ms: must be between 20 and 10240 (milliseconds), got 5",
            "gateway.toml:5: bluetooth.max_connections: must be between 1 and 8, got 9",
        ])
    }

    func testScanDutyOutOfRange() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [bluetooth]
        scan_duty = 0.05
        """, [
            "gateway.toml:4: bluetooth.scan_duty: must be between 0.1 and 1.0, got 0.05",
        ])
    }

    func testDurationsMustBePositive() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        window_s = 0
        leave_after_s = -5
        proof_ttl_s = 1e9
        min_samples = 0
        """, [
            "gateway.toml:4: presence.window_s: must be more than 0 and at most 604800 (seconds), got 0",
            "gateway.toml:5: presence.leave_after_s: must be more than 0 and at most 604800 (seconds), got -5",
            "gateway.toml:6: presence.proof_ttl_s: must be more than 0 and at most 604800 (seconds), got 1000000000",
            "gateway.toml:7: presence.min_samples: must be between 1 and 1000, got 0",
        ])
    }

    func testRSSIOutOfRange() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = 30
        exit_rssi = -200
        """, [
            "gateway.toml:4: presence.enter_rssi: must be between -127 and 20 (dBm), got 30",
            "gateway.toml:5: presence.exit_rssi: must be between -127 and 20 (dBm), got -200",
        ])
    }

    func testChoicesNameTheValidValues() {
        assertIssues("""
        [gateway]
        id = "door-1"
        log_level = "verbose"
        [bluetooth]
        scan = "pasive"
        connect_mode = "acceptlist"
        """, [
            #"gateway.toml:3: gateway.log_level: must be one of "debug", "info", "notice", "warning", "error", got "verbose""#,
            #"gateway.toml:5: bluetooth.scan: must be "passive" or "active", got "pasive""#,
            #"gateway.toml:6: bluetooth.connect_mode: must be "accept-list" or "direct", got "acceptlist""#,
        ])
    }

    func testMissingGatewayIDInPresentTable() {
        assertIssues("""
        [gateway]
        site = "S_HQ"
        """, [
            "gateway.toml:1: gateway.id: required key is missing",
        ])
    }

    func testMissingGatewayTableEntirely() {
        assertIssues("""
        [bluetooth]
        scan = "active"
        """, [
            "gateway.toml: gateway.id: required key is missing",
        ])
    }

    func testGatewayIDAndPathsAreChecked() {
        assertIssues("""
        [gateway]
        id = "door 1|x"
        state_dir = "var/lib/beacon-gateway"
        """, [
            #"gateway.toml:2: gateway.id: must be 1 to 64 letters, digits or . _ - : @, got "door 1|x""#,
            #"gateway.toml:3: gateway.state_dir: must be an absolute path, got "var/lib/beacon-gateway""#,
        ])
    }

    func testBadTransport() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [bluetooth]
        transport = "usb0"
        """, [
            #"gateway.toml:4: bluetooth.transport: must be "hciN", "tcp:HOST:PORT", "serial:/dev/TTY[@BAUD]" or "btsnoop:FILE", got "usb0""#,
        ])
    }

    func testTableOfTheWrongType() {
        assertIssues("""
        presence = 3
        [gateway]
        id = "door-1"
        """, [
            "gateway.toml:1: presence: must be a table ([presence]), got integer",
        ])
    }

    func testKeysInsideInlineTablesPointAtTheirTable() {
        assertIssues("""
        gateway = { id = "door-1" }
        presence = { enter_rssi = "high" }
        """, [
            "gateway.toml:2: presence.enter_rssi: must be an integer (dBm), got string",
        ])
    }

    func testAdvertiseNeedsSomethingToAdvertise() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [advertise]
        interval_ms = 10
        measured_power = -59
        """, [
            "gateway.toml:3: advertise: needs ibeacon or service_uuid (or both): what should phones look for?",
            "gateway.toml:4: advertise.interval_ms: must be between 20 and 10240 (milliseconds), got 10",
        ])
    }

    func testAdvertiseBadIdentities() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [advertise]
        ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10"
        service_uuid = "27adc9ca35eb465a9154b8ff9076f3e8"
        """, [
            #"gateway.toml:4: advertise.ibeacon: must be "UUID:MAJOR:MINOR" with MAJOR and MINOR in 0…65535, e.g. "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10:3", got "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10""#,
            #"gateway.toml:5: advertise.service_uuid: must be a 128-bit UUID "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", got "27adc9ca35eb465a9154b8ff9076f3e8""#,
        ])
    }

    func testUntrustedTextInMessagesIsEscapedAndBounded() {
        let long = String(repeating: "x", count: 100)
        assertIssues("""
        [gateway]
        id = "door-1"
        log_level = "a\\u0007b\(long)"
        """, [
            #"gateway.toml:3: gateway.log_level: must be one of "debug", "info", "notice", "warning", "error", got "a\u{7}b"#
                + String(repeating: "x", count: 61) + "…\"",
        ])
    }
}

/// `[security] enroll_group`: who may enrol through the agent (docs/security.md).
final class EnrollGroupTests: XCTestCase {
    func testAnEnrollGroupMustBeAGroupName() {
        assertIssues("""
        [gateway]
        id = "door-1"

        [security]
        enroll_group = "Installers; rm"
        """, [
            "gateway.toml:5: security.enroll_group: must be a group name (1 to 32 of a-z 0-9 _ -, starting with a letter or _), got \"Installers; rm\"",
        ])
        assertIssues("""
        [gateway]
        id = "door-1"
        [security]
        enroll_group = 4
        """, [
            "gateway.toml:4: security.enroll_group: must be a string, got integer",
        ])
    }

    func testAnEnrollGroupIsKeptAndRendered() throws {
        let configuration = try GatewayConfiguration.parse(text: """
        [gateway]
        id = "door-1"
        [security]
        enroll_group = "bg-installers"
        """, file: "gateway.toml", fileSystem: InMemoryFileSystem())
        XCTAssertEqual(configuration.security.enrollGroup, "bg-installers")
        XCTAssertTrue(configuration.renderEffective().contains("enroll_group = \"bg-installers\""))
        XCTAssertTrue(GatewayConfiguration.Security.isGroupName("_x1-y"))
        XCTAssertFalse(GatewayConfiguration.Security.isGroupName("1abc"))
        XCTAssertFalse(GatewayConfiguration.Security.isGroupName(String(repeating: "a", count: 33)))
    }
}
