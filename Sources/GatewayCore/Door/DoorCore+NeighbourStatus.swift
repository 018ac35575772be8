import EventLoop

/// What the door says of its neighbours (SPEC §17, docs/neighbours.md "Degraded, and
/// saying so"): how many there are, which are heard, and since when each was last heard.
/// Read by the heartbeat, `status` and the metrics; O(neighbours), only when one asks.
extension DoorCore {
    public func neighbourStatus(at time: Instant) -> NeighbourStatus? {
        guard let neighbourhood = presence.neighbourhood else { return nil }
        let table = neighbourhood.table
        let now = max(time.nanoseconds, presence.latest)
        let doors = table.ids.indices.map { index in
            let last = table.lastHeard[index]
            return NeighbourStatus.Door(
                id: table.ids[index],
                heardAgo: last == NeighbourTable.never ? nil : .nanoseconds(max(now &- last, 0)),
                heard: !table.isSilent(index, at: now, silence: neighbourhood.silence)
            )
        }
        return NeighbourStatus(anyDoor: table.anyDoor, doors: doors)
    }
}

/// The neighbours at one moment (`DoorCore.neighbourStatus`).
public struct NeighbourStatus: Hashable, Sendable {
    /// `neighbours = ["*"]`: `doors` are those seen on the bus so far.
    public var anyDoor: Bool
    /// Each neighbour, in the order of `[site] neighbours` (under `"*"`: as first heard).
    public var doors: [Door]

    public struct Door: Hashable, Sendable {
        public var id: String
        /// How long ago its last report was taken; nil: never since the start (or the
        /// last change of `[site]`).
        public var heardAgo: Duration?
        /// Heard within the last 10 s: it counts in this door's decisions.
        public var heard: Bool
    }

    /// Neighbours heard within the last 10 s.
    public var heard: Int { doors.count { $0.heard } }
}
