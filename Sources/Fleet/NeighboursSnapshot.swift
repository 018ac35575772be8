/// The neighbouring doors (SPEC §17, docs/neighbours.md) for the heartbeat's `site`,
/// `status` and the metrics; nil in a snapshot when `[site]` lists no neighbours.
public struct NeighboursSnapshot: Hashable, Sendable {
    /// `neighbours = ["*"]`: `doors` are those seen on the bus so far.
    public var anyDoor: Bool
    /// Each neighbour, in the order of `[site] neighbours` (under `"*"`: as first heard).
    public var doors: [Door]
    /// Neighbours' reports that came in, by result: `accepted` or a refusal's reason.
    public var sightingsIn: [String: UInt64]
    /// This door's reports, by result: `published`, `refused`, `not_sent`.
    public var sightingsOut: [String: UInt64]

    public struct Door: Hashable, Sendable {
        public var id: String
        /// Seconds since its last report was taken; nil: never heard since the start.
        public var heardAgoSeconds: Double?
        /// Heard within the last 10 s: it counts in this door's decisions.
        public var heard: Bool

        public init(id: String, heardAgoSeconds: Double?, heard: Bool) {
            self.id = id
            self.heardAgoSeconds = heardAgoSeconds
            self.heard = heard
        }
    }

    /// Every result of a report that came in, in the metrics' order (docs/fleet.md).
    public static let inResults = ["accepted", "malformed", "oversized", "own", "not_neighbour", "stale", "ahead",
                                   "forged", "replayed", "too_many_neighbours"]
    /// Every result of a report this door made.
    public static let outResults = ["published", "refused", "not_sent"]

    public init(anyDoor: Bool, doors: [Door], sightingsIn: [String: UInt64] = [:], sightingsOut: [String: UInt64] = [:]) {
        self.anyDoor = anyDoor
        self.doors = doors
        self.sightingsIn = sightingsIn
        self.sightingsOut = sightingsOut
    }

    /// SPEC §17's N: the neighbours configured (under `"*"`: seen so far).
    public var configured: Int { doors.count }
    /// SPEC §17's M: those heard within the last 10 s.
    public var heard: Int { doors.count { $0.heard } }
}
