import EventLoop

/// Who is inside now, for `beacon-gateway status` (see docs/fleet.md): read only when asked.
extension PresenceEngine {
    public struct OpenVisit: Hashable, Sendable {
        public var personId: String
        public var state: PresenceState
        /// The visit's start in wall-clock milliseconds, as its checkin carried it.
        public var visitStartWallMilliseconds: Int64?
        /// The person's filtered RSSI now (strongest tag), nil with too few samples.
        public var filteredRSSI: Int?
        /// The tag that decided the visit's last transition.
        public var tagId: String?
        /// A valid proof is held for one of the person's tags.
        public var proven: Bool
    }

    /// Every person with an open visit (PRESENT or UNCONFIRMED), in configuration order.
    /// Expires samples older than the window on the way, as the next sample would.
    public mutating func openVisits(at time: Instant) -> [OpenVisit] {
        let now = max(time.nanoseconds, latest)
        var visits: [OpenVisit] = []
        for index in persons.indices where persons[index].state.hasOpenVisit {
            let person = persons[index]
            let signal = signal(person: index, now: now)
            let deciding = Int(signal?.tag ?? person.decidingTag)
            var proven = false
            if case .valid = proof(person: index, now: now) { proven = true }
            visits.append(OpenVisit(
                personId: person.id, state: person.state,
                visitStartWallMilliseconds: person.visitStartWall == Self.never ? nil : person.visitStartWall,
                filteredRSSI: signal?.rssi,
                tagId: deciding >= 0 && deciding < tags.count ? tags[deciding].id : nil,
                proven: proven
            ))
        }
        return visits
    }
}
