/// The topics of one door on the site's bus (docs/site-bus.md): `P/S/G/…` with `P` the
/// topic prefix, `S` the site id and `G` the gateway id, and Home Assistant's discovery
/// topics under its own prefix. The ids are checked by the configuration (no `/`, `+`,
/// `#`), so every topic here is a plain topic name, never a filter.
public struct BusTopics: Hashable, Sendable {
    public let prefix: String
    public let site: String
    public let gateway: String
    public let discoveryPrefix: String

    public init(prefix: String, site: String, gateway: String, discoveryPrefix: String) {
        self.prefix = prefix
        self.site = site
        self.gateway = gateway
        self.discoveryPrefix = discoveryPrefix
    }

    /// `online` / `offline`, retained; the session's will.
    public var status: String { "\(prefix)/\(site)/\(gateway)/status" }
    /// Every event of the outbox, in `sequence` order.
    public var events: String { "\(prefix)/\(site)/\(gateway)/events" }
    /// Retained presence of one person at this door.
    public func presence(_ person: String) -> String { "\(prefix)/\(site)/\(gateway)/presence/\(person)" }
    /// Home Assistant's discovery config of one person at this door.
    public func discovery(_ person: String) -> String { "\(discoveryPrefix)/binary_sensor/\(gateway)/\(person)/config" }
    /// This door's sightings for its neighbours (SPEC §17), QoS 0, not retained.
    public var sightings: String { "\(prefix)/\(site)/sightings/\(gateway)" }
    /// Every door's sightings on the site (`+` is the sender's gateway id).
    public var sightingsFilter: String { "\(prefix)/\(site)/sightings/+" }
    /// The sender of a message on `sightingsFilter`, nil for any other topic. Read as UTF-8
    /// bytes, building no string but the sender's: it runs for every report on the bus, a
    /// flood's included (docs/neighbours.md, "Cost").
    public func sightingSender(_ topic: String) -> String? {
        func after(_ part: String, _ bytes: Substring.UTF8View) -> Substring.UTF8View? {
            bytes.starts(with: part.utf8) ? bytes.dropFirst(part.utf8.count) : nil
        }
        guard let afterPrefix = after(prefix, topic[...].utf8), let atSite = after("/", afterPrefix),
              let afterSite = after(site, atSite), let sender = after("/sightings/", afterSite),
              !sender.isEmpty, !sender.contains(UInt8(ascii: "/")) else { return nil }
        return String(Substring(sender))
    }

    /// Home Assistant's birth and last-will topic: `online` means it (re)started and has
    /// forgotten what it was not given retained.
    public var homeAssistantStatus: String { "\(discoveryPrefix)/status" }
}

/// What a published message is, for the counters (`beacon_gateway_bus_published_total`'s
/// `topic_kind`) and for what its acknowledgement means.
public enum BusTopicKind: String, Hashable, Sendable, CaseIterable {
    case status
    case events
    case presence
    case discovery
    case sightings
}

/// One message to publish.
public struct BusMessage: Hashable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    public var kind: BusTopicKind

    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool, kind: BusTopicKind) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.kind = kind
    }
}
