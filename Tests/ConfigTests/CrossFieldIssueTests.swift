import Config
import XCTest

/// Rules between keys, and several problems reported in one pass.
final class CrossFieldIssueTests: XCTestCase {
    func testExitRSSIMustBeBelowEnterRSSI() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = -70
        exit_rssi = -65
        """, [
            "gateway.toml:5: presence.exit_rssi: must be lower than enter_rssi (-70), got -65",
        ])
    }

    func testEqualThresholdsAgainstTheDefaultEnter() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        exit_rssi = -70
        """, [
            "gateway.toml:4: presence.exit_rssi: must be lower than enter_rssi (-70, the default), got -70",
        ])
    }

    func testEnterRSSIBelowTheDefaultExit() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = -80
        """, [
            "gateway.toml:4: presence.enter_rssi: must be higher than exit_rssi (-75, the default), got -80",
        ])
    }

    func testAnInvalidThresholdIsReportedOnlyOnce() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [presence]
        enter_rssi = "loud"
        exit_rssi = -65
        """, [
            "gateway.toml:4: presence.enter_rssi: must be an integer (dBm), got string",
        ])
    }

    func testLEDLinesMustDiffer() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [leds]
        green = 17
        amber = 27
        red = 17
        """, [
            "gateway.toml:6: leds.red: uses the same GPIO line (17) as green; each LED needs its own line",
        ])
    }

    func testLEDLinesRequiredAndInRange() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [leds]
        chip = "gpiochip0"
        green = 1024
        amber = 27
        """, [
            "gateway.toml:3: leds.red: required key is missing",
            "gateway.toml:5: leds.green: must be between 0 and 1023 (GPIO line offset), got 1024",
        ])
    }

    func testServerURLScheme() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "ftp://attendance.example.org"
        """, [
            #"gateway.toml:4: server.url: must start with http:// or https://, got "ftp://attendance.example.org""#,
        ])
    }

    func testServerURLHostAndShape() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https:///v1"
        """, [
            #"gateway.toml:4: server.url: has no host name, got "https:///v1""#,
        ])
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        url = "https://example.org/?x=1"
        """, [
            #"gateway.toml:4: server.url: must be a base URL without ?query or #fragment (events go to URL/v1/attendance/events), got "https://example.org/?x=1""#,
        ])
    }

    func testServerNeedsURL() {
        assertIssues("""
        [gateway]
        id = "door-1"
        [server]
        timeout_s = 0
        """, [
            "gateway.toml:3: server.url: required key is missing",
            "gateway.toml:4: server.timeout_s: must be more than 0 and at most 604800 (seconds), got 0",
        ])
    }

    func testManyProblemsAtOnceInLineOrder() {
        assertIssues("""
        [gateway]
        site = "S_HQ"
        log_level = "loud"

        [bluetooth]
        scan = "passive"
        tag_interval_ms = 100000
        scann = "active"

        [presence]
        enter_rssi = -70
        exit_rssi = -60

        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"

        [[person]]
        id = "u_1"
          [[person.tag]]
          id = "tag-1"
          address = "nope"
        """, [
            "gateway.toml:1: gateway.id: required key is missing",
            #"gateway.toml:3: gateway.log_level: must be one of "debug", "info", "notice", "warning", "error", got "loud""#,
            "gateway.toml:7: bluetooth.tag_interval_ms: must be between 20 and 10240 (milliseconds), got 100000",
            "gateway.toml:8: bluetooth.scann: unknown key; did you mean `scan`?",
            "gateway.toml:12: presence.exit_rssi: must be lower than enter_rssi (-70), got -60",
            "gateway.toml:16: person[1].tag[1]: a tag needs at least one identity: ibeacon, eddystone_uid, address or irk",
            #"gateway.toml:20: person[2].id: duplicate person id "u_1", already used by person[1]"#,
            #"gateway.toml:22: person[2].tag[1].id: duplicate tag id "tag-1", already used by person[1].tag[1]"#,
            #"gateway.toml:23: person[2].tag[1].address: must be a Bluetooth address "AA:BB:CC:DD:EE:FF", got "nope""#,
        ])
    }

    func testMultiLineValuesDoNotConfuseLineNumbers() {
        // Lines inside multi-line strings and arrays look like keys and headers; the
        // positions must still come from the real ones.
        assertIssues(#"""
        [gateway]
        id = "door-1"
        site = """
        [presence]
        enter_rssi = 1
        """
        door = '''
        x = 2 ''' # comment
        [bluetooth]
        scan = [
          "a", # [leds]
          "b",
        ]
        max_connections = "x"
        """#, [
            #"gateway.toml:3: gateway.site: must be 1 to 128 characters without control characters, got "[presence]\u{a}enter_rssi = 1\u{a}""#,
            "gateway.toml:10: bluetooth.scan: must be a string, got array",
            "gateway.toml:14: bluetooth.max_connections: must be an integer, got string",
        ])
    }
}
