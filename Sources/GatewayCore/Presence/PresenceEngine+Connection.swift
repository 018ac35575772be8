import EventLoop

/// Tags with `track = "connection"` (see docs/persistent-connect.md): presence follows the link. Connection RSSI
/// reads come in through `sample(tagIndex:…)` like advertisements; a link loss is this.
extension PresenceEngine {
    /// The link to the tag dropped: a PRESENT person becomes UNCONFIRMED at once (the
    /// leave debounce starts), unless another of their tags still gives a signal above
    /// `exit_rssi`. No event besides the state change.
    public mutating func linkLost(tagIndex: Int, at time: Instant) -> [PresenceEvent] {
        guard let slot = tagSlot(forTagIndex: tagIndex) else { return [] }
        let now = monotonic(time)
        let person = Int(tags[slot].person)
        var events: [PresenceEvent] = []
        fireDue(person: person, now: now, into: &events)
        // The lost link's samples no longer speak for the person.
        tags[slot].count = 0
        tags[slot].head = 0
        if persons[person].state == .present {
            if let other = signal(person: person, now: now), other.rssi > limits.exit {
                // Another tag keeps the visit confirmed.
            } else {
                beginUnconfirmed(person: person, tag: Int32(slot), at: now, into: &events)
            }
        }
        schedule(person: person)
        return events
    }
}
