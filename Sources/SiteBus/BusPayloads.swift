import JSONText

/// The payloads the door publishes besides events (docs/site-bus.md).
public enum BusPayloads {
    public static let online = Array("online".utf8)
    public static let offline = Array("offline".utf8)

    /// `{"state": "present"|"away", "since": ISO, "rssi": N}`; `rssi` null when not known
    /// (a person restored after a restart, not heard yet).
    public static func presence(present: Bool, since: String, rssi: Int?) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("state"); json.string(present ? "present" : "away")
        json.key("since"); json.string(since)
        json.key("rssi"); json.number(rssi)
        json.endObject()
        return Array(json.text.utf8)
    }

    /// The gateway as Home Assistant's device.
    public struct Device: Hashable, Sendable {
        public var gatewayId: String
        /// What Home Assistant shows: the door's name when configured, else the gateway id.
        public var name: String
        public var swVersion: String

        public init(gatewayId: String, name: String, swVersion: String) {
            self.gatewayId = gatewayId
            self.name = name
            self.swVersion = swVersion
        }
    }

    /// Home Assistant MQTT discovery for one person at this door: a `binary_sensor` of
    /// device class `presence` reading the presence topic, available while the door's
    /// status is `online`. Full key names (Home Assistant also takes abbreviations).
    public static func discovery(person: String, personName: String?, topics: BusTopics, device: Device) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("name"); json.string(personName ?? person)
        json.key("unique_id"); json.string("beacon-gateway_\(device.gatewayId)_\(person)")
        json.key("object_id"); json.string("\(device.gatewayId)_\(person)")
        json.key("device_class"); json.string("presence")
        json.key("state_topic"); json.string(topics.presence(person))
        json.key("value_template"); json.string("{{ value_json.state }}")
        json.key("payload_on"); json.string("present")
        json.key("payload_off"); json.string("away")
        json.key("json_attributes_topic"); json.string(topics.presence(person))
        json.key("availability_topic"); json.string(topics.status)
        json.key("payload_available"); json.string("online")
        json.key("payload_not_available"); json.string("offline")
        json.key("qos"); json.number(1)
        json.key("device")
        json.beginObject()
        json.key("identifiers"); json.beginArray(); json.string(device.gatewayId); json.endArray()
        json.key("name"); json.string(device.name)
        json.key("model"); json.string("beacon-gateway")
        json.key("manufacturer"); json.string("beacon-gateway")
        json.key("sw_version"); json.string(device.swVersion)
        json.endObject()
        json.endObject()
        return Array(json.text.utf8)
    }
}
