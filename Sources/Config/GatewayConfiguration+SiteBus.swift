import AttendanceEvents

extension GatewayConfiguration {
    /// `[mqtt]` (see docs/site-bus.md): the session with the site's broker and what the door
    /// publishes there.
    public struct MQTT: Hashable, Sendable {
        public var url: BrokerURL
        public var username: String?
        public var passwordFile: String?
        /// The password read from `passwordFile`, whitespace trimmed. Secret: never printed.
        public var password: [UInt8]?
        /// An extra CA certificate file; `nil` when unset or `""`.
        public var caFile: String?
        /// The first level of every topic the door publishes (`P` in docs/site-bus.md).
        public var topicPrefix: String
        /// Every event from the outbox on `P/S/G/events`.
        public var events: Bool
        /// Retained presence per person at this door.
        public var presence: Bool
        /// Home Assistant MQTT discovery.
        public var homeAssistant: Bool
        public var discoveryPrefix: String

        public init(url: BrokerURL, username: String? = nil, passwordFile: String? = nil, password: [UInt8]? = nil,
                    caFile: String? = nil, topicPrefix: String = MQTT.defaultTopicPrefix, events: Bool = true,
                    presence: Bool = true, homeAssistant: Bool = true, discoveryPrefix: String = MQTT.defaultDiscoveryPrefix) {
            self.url = url
            self.username = username
            self.passwordFile = passwordFile
            self.password = password
            self.caFile = caFile
            self.topicPrefix = topicPrefix
            self.events = events
            self.presence = presence
            self.homeAssistant = homeAssistant
            self.discoveryPrefix = discoveryPrefix
        }

        public static let defaultTopicPrefix = "beacon-gateway"
        public static let defaultDiscoveryPrefix = "homeassistant"
    }
}

extension ConfigurationDecoder {
    /// `[mqtt]`; nil when invalid (reported). `site`: `[gateway] site`, which the topics need.
    func decodeMQTT(_ table: TableReader) -> GatewayConfiguration.MQTT? {
        var table = table
        defer { table.reportUnknownKeys() }
        var url: BrokerURL?
        if !table.contains("url") {
            table.reportMissing("url")
        } else if let text = table.string("url") {
            switch BrokerURL.parse(text) {
            case let .success(parsed): url = parsed
            case let .failure(problem):
                // A user-info part may hold a password: the text is not echoed then.
                let got = problem == .userInfo ? "" : ", got \(quoted(text))"
                table.report("url", "\(problem)\(got)")
            }
        }
        let username = table.text("username", maximumLength: 256)
        let password = readSecret("password_file", in: &table, check: checkBrokerPassword)
        if password.path != nil, username == nil, !table.isInvalid("username") {
            table.report("password_file", "needs username: the broker takes a password only with a user name")
        }
        var caFile: String?
        if let path = table.string("ca_file"), !path.isEmpty {
            caFile = readable(resolve(path), key: "ca_file", in: &table)
        }
        let topicPrefix = topicLevels("topic_prefix", in: &table) ?? GatewayConfiguration.MQTT.defaultTopicPrefix
        let discoveryPrefix = topicLevels("discovery_prefix", in: &table) ?? GatewayConfiguration.MQTT.defaultDiscoveryPrefix
        let events = table.boolean("events") ?? true
        let presence = table.boolean("presence") ?? true
        let homeAssistant = table.boolean("homeassistant") ?? true
        guard let url else { return nil }
        return .init(url: url, username: username, passwordFile: password.path, password: password.bytes, caFile: caFile,
                     topicPrefix: topicPrefix, events: events, presence: presence, homeAssistant: homeAssistant,
                     discoveryPrefix: discoveryPrefix)
    }

    /// A topic prefix: one or more levels, none empty, without the wildcards `+` and `#`
    /// (they would make it a filter) or `$` first (the broker's own topics).
    private func topicLevels(_ key: String, in table: inout TableReader) -> String? {
        guard let text = table.text(key, maximumLength: 128) else { return nil }
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        if levels.contains(where: \.isEmpty) || text.contains("+") || text.contains("#") || text.hasPrefix("$") || text.contains(" ") {
            table.report(key, "must be topic levels separated by / (none empty, no spaces, no + or #, not starting with $), got \(quoted(text))")
            return nil
        }
        return text
    }

    /// The broker's password: one line of text, as MQTT's CONNECT carries it.
    private func checkBrokerPassword(_ bytes: [UInt8], path: String) -> Result<[UInt8], SecretContentError> {
        let password = trimmed(bytes)
        guard !password.isEmpty else { return .failure(.init("\(path) is empty; it must hold the broker's password")) }
        guard !password.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            return .failure(.init("\(path) must hold one line: the password without line breaks or control characters"))
        }
        return .success(password)
    }
}
