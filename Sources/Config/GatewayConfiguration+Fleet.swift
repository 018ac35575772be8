extension GatewayConfiguration {
    /// `[metrics]` (see docs/fleet.md): where the Prometheus text is served and written.
    /// Either, both or neither; a section with neither serves nothing.
    public struct Metrics: Hashable, Sendable {
        /// `GET /metrics` on this address; nil when `listen` is unset or `""`.
        public var listen: ListenAddress?
        /// Written atomically every 15 s; nil when `textfile` is unset or `""`.
        public var textfile: String?

        public init(listen: ListenAddress? = nil, textfile: String? = nil) {
            self.listen = listen
            self.textfile = textfile
        }
    }

    /// A numeric IPv4 address, an IPv6 address in brackets, or `localhost`, and a port.
    public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
        /// Without brackets: what the socket layer resolves.
        public var host: String
        public var port: UInt16

        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }

        /// `127.0.0.1:9464`, `[::1]:9464`, `localhost:9464`; nil for anything else.
        public init?(parsing text: String) {
            let host: Substring
            let portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
                host = text[text.index(after: text.startIndex) ..< close]
                portText = text[text.index(close, offsetBy: 2)...]
                guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            } else {
                guard let colon = text.lastIndex(of: ":") else { return nil }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
                let octets = host.split(separator: ".", omittingEmptySubsequences: false)
                let isIPv4 = octets.count == 4 && octets.allSatisfy { Self.isDigits($0) && $0.count <= 3 && UInt8($0) != nil }
                guard isIPv4 || host == "localhost" else { return nil }
            }
            guard Self.isDigits(portText), let port = UInt16(portText), port > 0 else { return nil }
            self.host = String(host)
            self.port = port
        }

        /// Only 0-9 (integer parsing would also take a sign).
        static func isDigits(_ text: Substring) -> Bool {
            !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }

        public var description: String {
            host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// `[server] heartbeat_s`: 0 (off) or this many seconds.
    public static let heartbeatRange = 1.0 ... 86_400.0
    public static let defaultHeartbeatInterval: Duration = .seconds(60)
    /// `[server] roster_poll_s`: seconds between two roster requests.
    public static let rosterPollRange = 1.0 ... 86_400.0
    public static let defaultRosterPollInterval: Duration = .seconds(60)
}

extension ConfigurationDecoder {
    /// `[server] heartbeat_s`: the interval, nil when 0 (off) or invalid (reported).
    func decodeHeartbeat(_ table: inout TableReader) -> Duration? {
        guard let value = table.value("heartbeat_s") else { return GatewayConfiguration.defaultHeartbeatInterval }
        let seconds: Double
        switch value {
        case let .integer(number): seconds = Double(number)
        case let .float(number): seconds = number
        default:
            table.report("heartbeat_s", "must be a number (seconds; 0 turns heartbeats off), got \(value.typeName)")
            return nil
        }
        if seconds == 0 { return nil }
        let range = GatewayConfiguration.heartbeatRange
        guard range.contains(seconds) else {
            table.report("heartbeat_s", "must be 0 (off) or between \(formatNumber(range.lowerBound)) and \(formatNumber(range.upperBound)) (seconds), got \(formatNumber(seconds))")
            return nil
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// `[server] roster_poll_s`: the interval (the default when absent or invalid, reported).
    func decodeRosterPoll(_ table: inout TableReader) -> Duration {
        let fallback = GatewayConfiguration.defaultRosterPollInterval
        guard let value = table.value("roster_poll_s") else { return fallback }
        let seconds: Double
        switch value {
        case let .integer(number): seconds = Double(number)
        case let .float(number): seconds = number
        default:
            table.report("roster_poll_s", "must be a number (seconds), got \(value.typeName)")
            return fallback
        }
        let range = GatewayConfiguration.rosterPollRange
        guard range.contains(seconds) else {
            table.report("roster_poll_s", "must be between \(formatNumber(range.lowerBound)) and \(formatNumber(range.upperBound)) (seconds), got \(formatNumber(seconds))")
            return fallback
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    func decodeMetrics(_ table: TableReader) -> GatewayConfiguration.Metrics {
        var table = table
        defer { table.reportUnknownKeys() }
        var result = GatewayConfiguration.Metrics()
        if let text = table.string("listen"), !text.isEmpty {
            if let address = GatewayConfiguration.ListenAddress(parsing: text) {
                result.listen = address
            } else {
                table.report("listen", #"must be "HOST:PORT" with a numeric IPv4 address, [IPv6] or localhost and a port 1…65535, e.g. "127.0.0.1:9464", got "# + quoted(text))
            }
        }
        if let text = table.string("textfile"), !text.isEmpty {
            if !text.hasPrefix("/") || text.hasSuffix("/") {
                table.report("textfile", "must be the absolute path of a file, e.g. \"/var/lib/prometheus/node-exporter/beacon_gateway.prom\", got \(quoted(text))")
            } else if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) || text.utf8.count > 4096 {
                table.report("textfile", "must be at most 4096 bytes without control characters")
            } else {
                result.textfile = text
            }
        }
        return result
    }
}
