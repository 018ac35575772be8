/// What the neighbours say they hear of each person, for an installer's command (`scan`,
/// `calibrate`: docs/cli.md, docs/neighbours.md "Installing"): the neighbours' latest
/// sighting of each person beside this door's own RSSI, so the margin at a seat by the wall
/// can be read. Reports are checked as the door checks them (`SightingVerifier`, and newer
/// than the last of their sender); nothing here decides anything. Sans-IO: payloads and
/// the wall clock in, sightings by person id out. Memory: persons × neighbours heard.
public struct NeighbourSightingsHeard: Sendable {
    public struct Heard: Hashable, Sendable {
        public var neighbour: String
        /// The neighbour's filtered RSSI of the person (dBm).
        public var rssi: Int
        /// The neighbour holds the person's visit open.
        public var holds: Bool
        /// The neighbour's wall clock when it made the report (ms since the Unix epoch).
        public var wallMilliseconds: Int64
    }

    /// A sighting counts this long after it was made (docs/neighbours.md: 3 s).
    public static let freshMilliseconds: Int64 = 3000

    private let verifier: SightingVerifier
    private let personByHash: [PersonHash: String]
    private var lastWall: [String: Int64] = [:]
    /// By person id, then neighbour: the latest sighting.
    private var latest: [String: [String: Heard]] = [:]
    /// Reports taken, and refused by reason.
    public private(set) var taken = 0
    public private(set) var refused: [SightingRefusal: Int] = [:]

    public init(keys: SightingKeys, ownId: String, neighbours: NeighbourList, personIds: [String]) {
        verifier = SightingVerifier(keys: keys, ownId: ownId, neighbours: neighbours)
        var byHash: [PersonHash: String] = [:]
        for id in personIds { byHash[keys.personHash(id)] = id }
        personByHash = byHash
    }

    /// A payload from the sightings topic, at this machine's wall clock `wallNow`. The
    /// persons it names (of those configured here) with their sightings, or why it was
    /// refused.
    public mutating func take(_ payload: [UInt8], wallNow: Int64) -> Result<[(personId: String, heard: Heard)], SightingRefusal> {
        let report: SightingReport
        switch verifier.verify(payload, wallNow: wallNow) {
        case let .failure(refusal):
            refused[refusal, default: 0] &+= 1
            return .failure(refusal)
        case let .success(verified):
            report = verified
        }
        guard report.wallMilliseconds > lastWall[report.sender, default: .min] else {
            refused[.replayed, default: 0] &+= 1
            return .failure(.replayed)
        }
        lastWall[report.sender] = report.wallMilliseconds
        taken &+= 1
        var named: [(personId: String, heard: Heard)] = []
        for sighting in report.sightings {
            guard let id = personByHash[sighting.person] else { continue }
            let heard = Heard(neighbour: report.sender, rssi: Int(sighting.rssi), holds: sighting.holds,
                              wallMilliseconds: report.wallMilliseconds)
            latest[id, default: [:]][report.sender] = heard
            named.append((id, heard))
        }
        return .success(named)
    }

    /// The neighbours' fresh sightings of the person at `wallNow`, strongest first.
    public func heard(personId: String, wallNow: Int64) -> [Heard] {
        guard let byNeighbour = latest[personId] else { return [] }
        return byNeighbour.values
            .filter { wallNow &- $0.wallMilliseconds <= Self.freshMilliseconds }
            .sorted { ($0.rssi, $1.neighbour) > ($1.rssi, $0.neighbour) }
    }

    /// Neighbours whose reports were taken (in the order first heard is not kept: sorted).
    public var neighboursHeard: [String] { lastWall.keys.sorted() }
}
