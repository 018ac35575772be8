/// The site bus's state and figures (docs/site-bus.md) for the heartbeat's `site`,
/// `status` and the metrics; nil in a snapshot when `[mqtt]` is not configured.
public struct BusSnapshot: Hashable, Sendable {
    /// `connecting`, `up`, `down` or `off`.
    public var state: String
    /// The last fault, while not up.
    public var error: String?
    /// Sessions established since start.
    public var connects: UInt64
    /// Events the broker acknowledged.
    public var eventsDelivered: UInt64
    /// By topic kind (`status`, `events`, `presence`, `discovery`) and result (`accepted`,
    /// `refused`).
    public var published: [PublishedKey: UInt64]
    /// What the door refused from the broker's side, by reason.
    public var refused: [String: UInt64]
    /// This door's sighting reports not sent: the session was not up (a report is worth
    /// something for 3 s only, never stored).
    public var sightingsNotSent: UInt64 = 0
    /// Neighbours' sighting reports refused unread: larger than any report can be.
    public var sightingsOversized: UInt64 = 0

    public struct PublishedKey: Hashable, Sendable, Comparable {
        public var topicKind: String
        public var result: String
        public init(topicKind: String, result: String) {
            self.topicKind = topicKind
            self.result = result
        }

        public static func < (a: Self, b: Self) -> Bool { (a.topicKind, a.result) < (b.topicKind, b.result) }
    }

    public init(state: String = "off", error: String? = nil, connects: UInt64 = 0, eventsDelivered: UInt64 = 0,
                published: [PublishedKey: UInt64] = [:], refused: [String: UInt64] = [:]) {
        self.state = state
        self.error = error
        self.connects = connects
        self.eventsDelivered = eventsDelivered
        self.published = published
        self.refused = refused
    }

    public var isUp: Bool { state == "up" }

    public mutating func count(topicKind: String, accepted: Bool) {
        published[PublishedKey(topicKind: topicKind, result: accepted ? "accepted" : "refused"), default: 0] &+= 1
    }
}
