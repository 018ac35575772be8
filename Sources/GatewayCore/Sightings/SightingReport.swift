/// What one door tells its neighbours about once a second (docs/neighbours.md): who it
/// hears, how strongly, and whether it holds their visit open. A report without
/// sightings is a heartbeat: "I am alive and hear nobody".
public struct SightingReport: Hashable, Sendable {
    /// The sending door's gateway id (`[gateway] id`).
    public var sender: String
    /// The sender's wall clock when it made the report, milliseconds since the Unix epoch.
    public var wallMilliseconds: Int64
    public var sightings: [Sighting]
    /// The version of the bytes it came in, or goes out in: 2, or 1 for an earlier door's
    /// (whose sightings never say a passage was confirmed: a report of version 1 goes out
    /// without that flag). Any value but 1 is 2.
    public private(set) var wireVersion: UInt8

    public init(sender: String, wallMilliseconds: Int64, sightings: [Sighting], wireVersion: UInt8 = 2) {
        self.sender = sender
        self.wallMilliseconds = wallMilliseconds
        self.sightings = sightings
        self.wireVersion = wireVersion == Self.firstVersion ? Self.firstVersion : Self.version
    }

    public var isHeartbeat: Bool { sightings.isEmpty }

    public struct Sighting: Hashable, Sendable {
        public var person: PersonHash
        /// The sender's filtered RSSI of the person (dBm).
        public var rssi: Int8
        /// The sender holds the person's visit open (PRESENT or UNCONFIRMED there).
        public var holds: Bool
        /// The sender confirmed the person's passage through its doorway within the last
        /// 30 s (docs/neighbours.md, "The rule"): where two doors hear them alike, the room
        /// is the one whose doorway they passed last.
        public var passageConfirmed: Bool

        public init(person: PersonHash, rssi: Int8, holds: Bool, passageConfirmed: Bool = false) {
            self.person = person
            self.rssi = rssi
            self.holds = holds
            self.passageConfirmed = passageConfirmed
        }
    }

    /// A report carries at most this many sightings; a door that hears more sends several.
    public static let maximumSightings = 512
    /// Gateway ids longer than this are refused (the configuration's ids are far shorter).
    public static let maximumSenderBytes = 64
}
