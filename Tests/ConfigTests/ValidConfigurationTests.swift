import Advertisements
import Config
import HCI
import Host
import XCTest

final class ValidConfigurationTests: XCTestCase {
    static let masterKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    static let tagKeyHex = "f1e9df2e41d03c9a3efa343aa41ececa150033c77386570e763f550c45709ee6"
    static let irkHex = "0123456789abcdef0123456789abcdef"
    static let token = "s3cr3t-token-value"

    static let full = """
    [gateway]
    id = "door-lab-301"
    site = "S_HQ"
    door = "lab-301"
    state_dir = "/var/lib/beacon-gateway"
    log_level = "notice"

    [bluetooth]
    transport = "tcp:127.0.0.1:6402"
    scan = "active"
    tag_interval_ms = 100
    connect_mode = "direct"
    max_connections = 5
    scan_duty = 0.5

    [presence]
    enter_rssi = -65
    exit_rssi = -80
    window_s = 2.5
    min_samples = 3
    lost_after_s = 12
    leave_after_s = 120
    away_after_s = 90
    proof_ttl_s = 300

    [server]
    url = "https://attendance.example.org"
    token_file = "/etc/beacon-gateway/token"
    ca_file = "/etc/beacon-gateway/ca.pem"
    timeout_s = 6
    max_backoff_s = 600

    [security]
    master_key_file = "master.key"

    [leds]
    chip = "gpiochip4"
    green = 17
    amber = 27
    red = 22
    active_low = true

    [advertise]
    interval_ms = 300
    ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:10:3"
    service_uuid = "27adc9ca-35eb-465a-9154-b8ff9076f3e8"
    measured_power = -61

    [[person]]
    id = "u_1001"
    name = "Aiko"
    require_proof = true
      [[person.tag]]
      id = "tag-1001"
      ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1"
      address = "C0:11:22:33:44:55"
      track = "connection"

      [[person.tag]]
      id = "tag-1002"
      irk = "\(irkHex)"
      key = "\(tagKeyHex)"

    [[person]]
    id = "u_1002"
      [[person.tag]]
      id = "tag-2001"
      eddystone_uid = "edd1ebeac04e5defa017:0123456789ab"
    """

    static var fileSystem: InMemoryFileSystem {
        var fs = InMemoryFileSystem()
        fs.add("/etc/beacon-gateway/token", "\(token)\n")
        fs.add("/etc/beacon-gateway/master.key", "  \(masterKeyHex)\n")
        fs.add("/etc/beacon-gateway/ca.pem", mode: 0o644, "-----BEGIN CERTIFICATE-----\n")
        return fs
    }

    func load() throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(text: Self.full, file: "/etc/beacon-gateway/gateway.toml", fileSystem: Self.fileSystem)
    }

    func testFullConfigurationLoadsEveryValue() throws {
        let config = try load()
        XCTAssertEqual(config.gateway, .init(id: "door-lab-301", site: "S_HQ", door: "lab-301",
                                             stateDirectory: "/var/lib/beacon-gateway", logLevel: .notice))
        XCTAssertEqual(config.bluetooth, .init(transport: .tcp(host: "127.0.0.1", port: 6402), scan: .active,
                                               tagIntervalMilliseconds: 100, connectMode: .direct,
                                               maxConnections: 5, scanDuty: 0.5))
        // As the host scans and connects: `run` and `prove` read these, not the section.
        XCTAssertEqual(config.bluetooth.scanSettings(), ScanSettings(mode: .active, tagIntervalMs: 100, dutyOverride: 0.5))
        XCTAssertEqual(config.bluetooth.connectScheduling(), ConnectScheduler.Configuration(mode: .direct, maxConnections: 5))
        XCTAssertEqual(config.bluetooth.connectScheduling(maxConnections: 1).maxConnections, 1)
        XCTAssertEqual(config.presence, .init(enterRSSI: -65, exitRSSI: -80, window: .milliseconds(2500), minSamples: 3,
                                              lostAfter: .seconds(12), leaveAfter: .seconds(120),
                                              awayAfter: .seconds(90), proofTTL: .seconds(300)))
        let server = try XCTUnwrap(config.server)
        XCTAssertEqual(server.url, "https://attendance.example.org")
        XCTAssertEqual(server.tokenFile, "/etc/beacon-gateway/token")
        XCTAssertEqual(server.token, Array(Self.token.utf8))
        XCTAssertEqual(server.caFile, "/etc/beacon-gateway/ca.pem")
        XCTAssertEqual(server.timeout, .seconds(6))
        XCTAssertEqual(server.maxBackoff, .seconds(600))
        // Relative to the configuration file's directory.
        XCTAssertEqual(config.security.masterKeyFile, "/etc/beacon-gateway/master.key")
        XCTAssertEqual(config.security.masterKey, Array(0 ... 31))
        XCTAssertEqual(config.leds, .init(chip: "gpiochip4", green: 17, amber: 27, red: 22, activeLow: true))
        let advertise = try XCTUnwrap(config.advertise)
        XCTAssertEqual(advertise.intervalMilliseconds, 300)
        XCTAssertEqual(advertise.iBeacon?.major, 10)
        XCTAssertEqual(advertise.iBeacon?.minor, 3)
        XCTAssertEqual(advertise.iBeacon.map { TagIdentity.formatUUID($0.uuid) }, "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        XCTAssertEqual(advertise.serviceUUID.map(TagIdentity.formatUUID), "27adc9ca-35eb-465a-9154-b8ff9076f3e8")
        XCTAssertEqual(advertise.measuredPower, -61)

        XCTAssertEqual(config.persons.map(\.id), ["u_1001", "u_1002"])
        let aiko = config.persons[0]
        XCTAssertEqual(aiko.name, "Aiko")
        XCTAssertTrue(aiko.requireProof)
        XCTAssertEqual(aiko.tags.map(\.id), ["tag-1001", "tag-1002"])
        XCTAssertEqual(aiko.tags[0].identities, [
            try TagIdentity.parse(key: "ibeacon", value: "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1"),
            .address(try XCTUnwrap(BluetoothAddress("C0:11:22:33:44:55"))),
        ])
        XCTAssertEqual(aiko.tags[0].track, .connection)
        XCTAssertNil(aiko.tags[0].key)
        XCTAssertEqual(aiko.tags[1].identities, [try TagIdentity.parse(key: "irk", value: Self.irkHex)])
        XCTAssertEqual(aiko.tags[1].key.map { HexText.lowercase($0) }, Self.tagKeyHex)
        XCTAssertEqual(aiko.tags[1].track, .advertising)
        let second = config.persons[1]
        XCTAssertNil(second.name)
        XCTAssertFalse(second.requireProof)
        XCTAssertEqual(second.tags.map(\.identities), [[try TagIdentity.parse(key: "eddystone_uid", value: "edd1ebeac04e5defa017:0123456789ab")]])
    }

    func testLookupByID() throws {
        let config = try load()
        XCTAssertEqual(config.person(id: "u_1002")?.tags.first?.id, "tag-2001")
        XCTAssertNil(config.person(id: "u_9"))
        let found = try XCTUnwrap(config.tag(id: "tag-1002"))
        XCTAssertEqual(found.person.id, "u_1001")
        XCTAssertEqual(found.tag.id, "tag-1002")
        XCTAssertNil(config.tag(id: "tag-9"))
    }

    func testMinimalConfigurationGetsEveryDefault() throws {
        let config = try GatewayConfiguration.parse(text: "[gateway]\nid = \"door-1\"\n", file: "gateway.toml",
                                                    fileSystem: InMemoryFileSystem())
        XCTAssertEqual(config, GatewayConfiguration(gateway: .init(id: "door-1")))
        XCTAssertEqual(config.gateway.stateDirectory, "/var/lib/beacon-gateway")
        XCTAssertEqual(config.gateway.logLevel, .info)
        XCTAssertEqual(config.bluetooth.transport, .userChannel(index: 0))
        XCTAssertEqual(config.bluetooth.scan, .passive)
        XCTAssertEqual(config.bluetooth.tagIntervalMilliseconds, 700)
        XCTAssertEqual(config.bluetooth.connectMode, .acceptList)
        XCTAssertEqual(config.bluetooth.maxConnections, 3)
        XCTAssertNil(config.bluetooth.scanDuty)
        XCTAssertEqual(config.presence.enterRSSI, -70)
        XCTAssertEqual(config.presence.exitRSSI, -75)
        XCTAssertEqual(config.presence.window, .seconds(3))
        XCTAssertEqual(config.presence.minSamples, 2)
        XCTAssertEqual(config.presence.lostAfter, .seconds(10))
        XCTAssertEqual(config.presence.leaveAfter, .seconds(180))
        XCTAssertEqual(config.presence.awayAfter, .seconds(60))
        XCTAssertEqual(config.presence.proofTTL, .seconds(600))
        XCTAssertNil(config.server)
        XCTAssertNil(config.security.masterKeyFile)
        XCTAssertNil(config.leds)
        XCTAssertNil(config.advertise)
        XCTAssertEqual(config.persons, [])
    }

    func testSectionDefaults() throws {
        let text = """
        [gateway]
        id = "g"
        [server]
        url = "http://127.0.0.1:8080/"
        [leds]
        green = 1
        amber = 2
        red = 3
        [advertise]
        service_uuid = "27ADC9CA-35EB-465A-9154-B8FF9076F3E8"
        """
        let config = try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: InMemoryFileSystem())
        XCTAssertEqual(config.server, .init(url: "http://127.0.0.1:8080/"))
        XCTAssertEqual(config.server?.timeout, .seconds(4))
        XCTAssertEqual(config.server?.maxBackoff, .seconds(300))
        XCTAssertEqual(config.leds, .init(chip: "gpiochip0", green: 1, amber: 2, red: 3, activeLow: false))
        XCTAssertEqual(config.advertise?.intervalMilliseconds, 200)
        XCTAssertEqual(config.advertise?.measuredPower, -59)
        XCTAssertNil(config.advertise?.iBeacon)
    }

    /// `[bluetooth] transport` goes through the transport layer's own parser, plus one rule
    /// of the service's: a serial device by absolute path.
    func testTransportForms() throws {
        func transport(_ text: String) throws -> TransportSpec {
            try GatewayConfiguration.parse(text: "[gateway]\nid = \"g\"\n[bluetooth]\ntransport = \"\(text)\"\n",
                                           file: "gateway.toml", fileSystem: InMemoryFileSystem()).bluetooth.transport
        }
        XCTAssertEqual(try transport("hci1"), .userChannel(index: 1))
        XCTAssertEqual(try transport("tcp:localhost:1234"), .tcp(host: "localhost", port: 1234))
        XCTAssertEqual(try transport("tcp:[::1]:1234"), .tcp(host: "::1", port: 1234))
        XCTAssertEqual(try transport("serial:/dev/ttyACM0"), .serial(path: "/dev/ttyACM0", baud: 1_000_000))
        XCTAssertEqual(try transport("serial:/dev/ttyACM0@115200"), .serial(path: "/dev/ttyACM0", baud: 115_200))
        XCTAssertEqual(try transport("btsnoop:capture.log"), .btsnoop(path: "capture.log"))
        for bad in ["", "hci", "hcix", "hci99999999", "tcp:host", "tcp::80", "tcp:host:0", "tcp:host:70000", "tcp:a b:80",
                    "serial:", "serial:ttyACM0", "serial:/dev/tty@", "serial:/dev/tty@fast", "serial:/dev/tty@12345",
                    "btsnoop:", "usb:1"] {
            XCTAssertThrowsError(try transport(bad), bad)
        }
        for text in ["hci0", "tcp:localhost:1234", "tcp:[::1]:1234", "serial:/dev/ttyACM0", "serial:/dev/ttyS0@115200", "btsnoop:x"] {
            XCTAssertEqual(try transport(text).description, text)
        }
    }

    func testTransportIssuesSayWhy() {
        assertIssues("[gateway]\nid = \"g\"\n[bluetooth]\ntransport = \"tcp:host\"\n", [
            #"gateway.toml:4: bluetooth.transport: must be "hciN", "tcp:HOST:PORT", "serial:/dev/TTY[@BAUD]" or "btsnoop:FILE", got "tcp:host" (missing :PORT)"#,
        ])
        assertIssues("[gateway]\nid = \"g\"\n[bluetooth]\ntransport = \"serial:/dev/ttyACM0@12345\"\n", [
            "gateway.toml:4: bluetooth.transport: unsupported serial speed 12345: use one of " + TransportSpec.standardBaudRates.map(String.init).joined(separator: ", "),
        ])
    }

    func testExampleFileIsValid() throws {
        // Tests/ConfigTests/ValidConfigurationTests.swift → the package root.
        let root = URLPath.packageRoot(from: #filePath)
        var fs = InMemoryFileSystem()
        let example = try SystemFileSystem().read(root + "/config/gateway.example.toml", limit: 1 << 20)
        fs.add("/etc/beacon-gateway/token", "token\n")
        fs.add("/etc/beacon-gateway/master.key", Self.masterKeyHex + "\n")
        let config = try GatewayConfiguration.parse(
            text: String(decoding: example.bytes, as: UTF8.self), file: "/etc/beacon-gateway/gateway.toml", fileSystem: fs
        )
        XCTAssertEqual(config.gateway.id, "door-lab-301")
        XCTAssertFalse(config.persons.isEmpty)
        // No tag firmware outside the test world runs the proof protocol yet: an example
        // person who needed a proof would never be checked in.
        XCTAssertFalse(config.persons.contains(where: \.requireProof))
        XCTAssertNil(config.mqtt, "the example's [mqtt] is commented out: a door without a broker must start")
        XCTAssertNil(config.site, "the example's [site] is commented out: a door decides alone unless told of neighbours")

        // The commented [mqtt] block, uncommented, is valid as written.
        let text = String(decoding: example.bytes, as: UTF8.self)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#[mqtt]") || line.hasPrefix("#[site]") || (line.hasPrefix("#") && !line.hasPrefix("##") && line.dropFirst().first.map { $0 != " " } == true)
                ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        fs.add("/etc/beacon-gateway/mqtt-password", "pw\n")
        let withBus = try GatewayConfiguration.parse(text: uncommented, file: "/etc/beacon-gateway/gateway.toml", fileSystem: fs)
        XCTAssertEqual(withBus.mqtt?.url.description, "mqtts://broker.example.org:8883")
        XCTAssertEqual(withBus.mqtt?.username, "door-lab-301")
        // The commented [site] block too (it needs the [mqtt] above and [security]).
        XCTAssertEqual(withBus.site, GatewayConfiguration.Site(neighbours: .doors(["door-lab-302"]), marginDB: 6, handover: .seconds(5)))
    }
}

enum URLPath {
    /// Three levels up from this test file.
    static func packageRoot(from file: String) -> String {
        var components = file.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return components.joined(separator: "/")
    }
}
