import Advertisements
import AttendanceEvents
import HCI
import PresenceProof

/// What the door core is configured with: the roster and settings (from the
/// configuration file or the server's roster), the gateway's identity.
public struct DoorSetup: Sendable {
    public var gateway: GatewayIdentity
    public var appVersion: String
    public var settings: PresenceSettings
    /// A tag's position in `tags` is the index the matcher reports and the engine keys
    /// samples by; `persons` refer to tags by that index.
    public var persons: [PresencePerson]
    public var tags: [ConfiguredTag]
    /// Only tags that may ever need a connection (proofs, connection tracking), by tag index.
    public var connectionTags: [Int: DoorConnectionTag]
    /// `[site]`: the neighbouring doors (docs/neighbours.md); nil: this door decides alone.
    public var neighbours: NeighbourSetup?

    public init(gateway: GatewayIdentity, appVersion: String, settings: PresenceSettings, persons: [PresencePerson],
                tags: [ConfiguredTag], connectionTags: [Int: DoorConnectionTag] = [:], neighbours: NeighbourSetup? = nil) {
        self.gateway = gateway
        self.appVersion = appVersion
        self.settings = settings
        self.persons = persons
        self.tags = tags
        self.connectionTags = connectionTags
        self.neighbours = neighbours
    }
}

/// A tag that may need a connection (docs/persistent-connect.md).
public struct DoorConnectionTag: Hashable, Sendable {
    public var tagId: String
    public var personId: String
    public var requireProof: Bool
    /// `track = "connection"`: the connection's RSSI is its presence signal.
    public var tracked: Bool
    public var key: TagKey?
    /// From the configuration (an `address` identity); else learnt from advertisements.
    public var configuredPeer: ConnectPeer?

    public init(tagId: String, personId: String, requireProof: Bool, tracked: Bool, key: TagKey?, configuredPeer: ConnectPeer?) {
        self.tagId = tagId
        self.personId = personId
        self.requireProof = requireProof
        self.tracked = tracked
        self.key = key
        self.configuredPeer = configuredPeer
    }

    var wish: ConnectionWishes.Tag {
        ConnectionWishes.Tag(tagId: tagId, personId: personId, requireProof: requireProof, tracked: tracked,
                             hasKey: key != nil, configuredPeer: configuredPeer)
    }
}
