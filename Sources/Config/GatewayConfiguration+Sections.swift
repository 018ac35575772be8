import Advertisements
import GatewayCore
import HCI
import LEDs

extension GatewayConfiguration {
    /// `[gateway]`
    public struct Gateway: Hashable, Sendable {
        /// Used in events (`deviceId`, `X-Device-Id`) and idempotency keys: 1…64 of
        /// letters, digits and `. _ - : @`.
        public var id: String
        public var site: String?
        public var door: String?
        /// Absolute path of the directory holding the outbox and presence state.
        public var stateDirectory: String
        public var logLevel: LogLevel

        public init(id: String, site: String? = nil, door: String? = nil,
                    stateDirectory: String = Gateway.defaultStateDirectory, logLevel: LogLevel = .info) {
            self.id = id
            self.site = site
            self.door = door
            self.stateDirectory = stateDirectory
            self.logLevel = logLevel
        }

        public static let defaultStateDirectory = "/var/lib/beacon-gateway"
    }

    /// Journal priorities the agent logs at; lower ones are suppressed.
    public enum LogLevel: String, CaseIterable, Hashable, Sendable {
        case debug, info, notice, warning, error
    }

    /// `[bluetooth]`
    public struct Bluetooth: Hashable, Sendable {
        public var transport: TransportSpec
        public var scan: ScanMode
        /// The tags' advertising interval, 20…10240 ms; scan timing derives from it.
        public var tagIntervalMilliseconds: Int
        public var connectMode: ConnectMode
        /// 1…8 simultaneous connections to tags.
        public var maxConnections: Int
        /// 0.1…1.0: the fraction of time the radio scans. Overrides the scan window derived
        /// from `tagIntervalMilliseconds`, for Pis whose Wi-Fi shares the radio.
        public var scanDuty: Double?

        public init(transport: TransportSpec = .userChannel(index: 0), scan: ScanMode = .passive,
                    tagIntervalMilliseconds: Int = 700, connectMode: ConnectMode = .acceptList,
                    maxConnections: Int = 3, scanDuty: Double? = nil) {
            self.transport = transport
            self.scan = scan
            self.tagIntervalMilliseconds = tagIntervalMilliseconds
            self.connectMode = connectMode
            self.maxConnections = maxConnections
            self.scanDuty = scanDuty
        }

        public static let tagIntervalRange = 20 ... 10240
        public static let maxConnectionsRange = 1 ... 8
        public static let scanDutyRange = 0.1 ... 1.0
    }

    public enum ScanMode: String, CaseIterable, Hashable, Sendable {
        case passive, active
    }

    /// How pending connections to tags are initiated (see docs/persistent-connect.md).
    public enum ConnectMode: String, CaseIterable, Hashable, Sendable {
        case acceptList = "accept-list"
        case direct
    }

    /// `[presence]`: the thresholds and timers of docs/presence.md, decoded straight into the
    /// engine's own settings, whose defaults are the only ones. Durations are positive and
    /// at most ``maximumDuration``.
    public typealias Presence = PresenceSettings

    /// `[server]` (see docs/event-api.md).
    public struct Server: Hashable, Sendable {
        /// `http://` or `https://`, with a host; events go to `{url}/v1/attendance/events`.
        public var url: String
        public var tokenFile: String?
        /// The bearer token read from `tokenFile`, whitespace trimmed. Secret: never printed.
        public var token: [UInt8]?
        /// An extra CA certificate file; `nil` when unset or `""`.
        public var caFile: String?
        public var timeout: Duration
        public var maxBackoff: Duration
        /// Between two heartbeats (see docs/fleet.md); nil: none are sent (`heartbeat_s = 0`).
        public var heartbeatInterval: Duration? = GatewayConfiguration.defaultHeartbeatInterval
        /// Whether persons are also taken from the server's roster (see docs/fleet.md).
        public var roster = false
        /// Between two roster requests.
        public var rosterPollInterval: Duration = GatewayConfiguration.defaultRosterPollInterval

        public init(url: String, tokenFile: String? = nil, token: [UInt8]? = nil, caFile: String? = nil,
                    timeout: Duration = .seconds(4), maxBackoff: Duration = .seconds(300)) {
            self.url = url
            self.tokenFile = tokenFile
            self.token = token
            self.caFile = caFile
            self.timeout = timeout
            self.maxBackoff = maxBackoff
        }
    }

    /// `[security]`
    public struct Security: Hashable, Sendable {
        /// Where the site master key was read from.
        public var masterKeyFile: String?
        /// 32 bytes read from `masterKeyFile`. Secret: never printed.
        public var masterKey: [UInt8]?
        /// A group whose members may open enrolment windows through the running agent,
        /// besides root and the service's user (docs/security.md, "The status socket").
        public var enrollGroup: String?

        public init(masterKeyFile: String? = nil, masterKey: [UInt8]? = nil, enrollGroup: String? = nil) {
            self.masterKeyFile = masterKeyFile
            self.masterKey = masterKey
            self.enrollGroup = enrollGroup
        }
    }

    /// `[leds]`: a gpiochip and three distinct line offsets (see docs/leds.md), decoded
    /// straight into the LED driver's wiring.
    public typealias LEDs = LEDWiring

    /// `[advertise]`: the gateway as the door's beacon. At least one of `iBeacon` and
    /// `serviceUUID` is set.
    public struct Advertise: Hashable, Sendable {
        /// 20…10240 ms.
        public var intervalMilliseconds: Int
        public var iBeacon: IBeacon?
        /// A 128-bit service UUID, 16 bytes most significant first.
        public var serviceUUID: [UInt8]?
        /// The calibrated RSSI at 1 m advertised in the iBeacon frame, −127…20 dBm.
        public var measuredPower: Int

        public init(intervalMilliseconds: Int = 200, iBeacon: IBeacon? = nil,
                    serviceUUID: [UInt8]? = nil, measuredPower: Int = -59) {
            self.intervalMilliseconds = intervalMilliseconds
            self.iBeacon = iBeacon
            self.serviceUUID = serviceUUID
            self.measuredPower = measuredPower
        }

        public struct IBeacon: Hashable, Sendable {
            /// 16 bytes, most significant first, as transmitted.
            public var uuid: [UInt8]
            public var major: UInt16
            public var minor: UInt16

            public init(uuid: [UInt8], major: UInt16, minor: UInt16) {
                self.uuid = uuid
                self.major = major
                self.minor = minor
            }
        }

        public static let intervalRange = 20 ... 10240
        public static let measuredPowerRange = -127 ... 20
    }

    /// The longest duration any `_s` key accepts (one week): keeps conversions to
    /// nanoseconds far from overflow.
    public static let maximumDuration: Duration = .seconds(604_800)
}

/// What `[presence]` accepts.
extension PresenceSettings {
    /// `enter_rssi`, `exit_rssi`: dBm.
    public static let rssiRange = -127 ... 20
    public static let minSamplesRange = 1 ... 1000
}

/// What `[leds]` accepts.
extension LEDWiring {
    /// `green`, `amber`, `red`: line offsets on the chip.
    public static let lineRange = 0 ... 1023
}

/// What `[security]` accepts.
extension GatewayConfiguration.Security {
    /// `enroll_group`: a portable group name, as useradd(8) and groupadd(8) take them by default.
    public static func isGroupName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: "_") }
        guard (1 ... 32).contains(bytes.count), let first = bytes.first, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
    }
}
