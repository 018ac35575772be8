import EventLoop

/// Connection-tracked tags (`track = "connection"`, SPEC §6): the kept-open link is the
/// evidence, so losing it is the same as going silent for `lost_after_s`.
extension PresenceEngine {
    /// The link to a connection-tracked tag dropped: a PRESENT person becomes UNCONFIRMED
    /// now (the visit stays open; the next sample continues it, a leave timer ends it).
    public mutating func linkLost(tagIndex: Int, at time: Instant) -> [PresenceEvent] {
        guard let slot = tagSlot(forTagIndex: tagIndex) else { return [] }
        let now = monotonic(time)
        let person = Int(tags[slot].person)
        guard persons[person].state == .present else { return [] }
        var events: [PresenceEvent] = []
        beginUnconfirmed(person: person, tag: Int32(slot), at: now, into: &events)
        schedule(person: person)
        return events
    }
}
