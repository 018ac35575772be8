/// What one door tells its neighbours about once a second (docs/neighbours.md): who it
/// hears, how strongly, and whether it holds their visit open. A report without
/// sightings is a heartbeat: "I am alive and hear nobody".
public struct SightingReport: Hashable, Sendable {
    /// The sending door's gateway id (`[gateway] id`).
    public var sender: String
    /// The sender's wall clock when it made the report, milliseconds since the Unix epoch.
    public var wallMilliseconds: Int64
    public var sightings: [Sighting]

    public init(sender: String, wallMilliseconds: Int64, sightings: [Sighting]) {
        self.sender = sender
        self.wallMilliseconds = wallMilliseconds
        self.sightings = sightings
    }

    public var isHeartbeat: Bool { sightings.isEmpty }

    public struct Sighting: Hashable, Sendable {
        public var person: PersonHash
        /// The sender's filtered RSSI of the person (dBm).
        public var rssi: Int8
        /// The sender holds the person's visit open (PRESENT or UNCONFIRMED there).
        public var holds: Bool
        /// The person came in through the sender's doorway lately (a confirmed passage,
        /// docs/neighbours.md): where two doors hear them alike, the room is the one whose
        /// doorway they passed last.
        public var cameThroughDoorway: Bool

        public init(person: PersonHash, rssi: Int8, holds: Bool, cameThroughDoorway: Bool = false) {
            self.person = person
            self.rssi = rssi
            self.holds = holds
            self.cameThroughDoorway = cameThroughDoorway
        }
    }

    /// A report carries at most this many sightings; a door that hears more sends several.
    public static let maximumSightings = 512
    /// Gateway ids longer than this are refused (the configuration's ids are far shorter).
    public static let maximumSenderBytes = 64
}
