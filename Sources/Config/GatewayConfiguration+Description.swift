import AttendanceEvents

// Secret-holding types describe themselves without their secrets, so a stray
// `print(configuration)`, string interpolation in a log line or `dump` cannot leak a key.

extension GatewayConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The effective configuration, secrets masked.
    public var description: String { renderEffective() }
    public var debugDescription: String { renderEffective() }
    public var customMirror: Mirror {
        Mirror(self, children: [
            "gateway": gateway, "bluetooth": bluetooth, "presence": presence, "server": server as Any,
            "security": security, "leds": leds as Any, "advertise": advertise as Any, "persons": persons,
            "mqtt": mqtt as Any, "site": site as Any,
        ])
    }
}

extension GatewayConfiguration.Server {
    /// The URL as it may be printed and logged: without `user:password@`.
    public var displayURL: String { ServerURL(url)?.redacted ?? url }
}

extension GatewayConfiguration.Server: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "Server(url: \(displayURL), tokenFile: \(tokenFile ?? "none"), token: \(token == nil ? "none" : GatewayConfiguration.mask), caFile: \(caFile ?? "none"), timeout: \(timeout), maxBackoff: \(maxBackoff))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: [
            "url": displayURL, "tokenFile": tokenFile as Any, "token": token == nil ? "none" : GatewayConfiguration.mask,
            "caFile": caFile as Any, "timeout": timeout, "maxBackoff": maxBackoff,
        ])
    }
}

extension GatewayConfiguration.MQTT: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "MQTT(url: \(url), username: \(username ?? "none"), passwordFile: \(passwordFile ?? "none"), password: \(password == nil ? "none" : GatewayConfiguration.mask), caFile: \(caFile ?? "none"), topicPrefix: \(topicPrefix), events: \(events), presence: \(presence), homeAssistant: \(homeAssistant), discoveryPrefix: \(discoveryPrefix))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: [
            "url": url.description, "username": username as Any, "passwordFile": passwordFile as Any,
            "password": password == nil ? "none" : GatewayConfiguration.mask, "caFile": caFile as Any,
            "topicPrefix": topicPrefix, "events": events, "presence": presence, "homeAssistant": homeAssistant,
            "discoveryPrefix": discoveryPrefix,
        ])
    }
}

extension GatewayConfiguration.Security: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "Security(masterKeyFile: \(masterKeyFile ?? "none"), masterKey: \(masterKey == nil ? "none" : GatewayConfiguration.mask))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: [
            "masterKeyFile": masterKeyFile as Any,
            "masterKey": masterKey == nil ? "none" : GatewayConfiguration.mask,
        ])
    }
}

extension Tag: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        let identities = identities.map { "\($0.configurationKey)=\($0)" }.joined(separator: ", ")
        return "Tag(id: \(id), \(identities), key: \(key == nil ? "derived" : GatewayConfiguration.mask), track: \(track.rawValue))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: [
            "id": id, "identities": identities.map(\.description),
            "key": key == nil ? "derived" : GatewayConfiguration.mask, "track": track,
        ])
    }
}

extension Person: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "Person(id: \(id), name: \(name ?? "none"), requireProof: \(requireProof), tags: [\(tags.map(\.description).joined(separator: ", "))])"
    }
    public var debugDescription: String { description }
}
