import EventLoop

/// Configuration reload (SIGHUP, docs/logs-and-systemd.md: "without losing presence state").
extension PresenceEngine {
    /// Replaces settings and persons at `time`. Timers due by then fire first. Persons
    /// and tags are matched by id: kept persons keep their state, visit and timers
    /// (recomputed with the new settings, which apply from now); kept tags keep their
    /// newest samples, address, proof and lockout, even under a new matcher index.
    /// A removed person with an open visit gets its checkout now (timestamp: when
    /// UNCONFIRMED began, or now if PRESENT).
    public mutating func reconfigure(settings newSettings: PresenceSettings, persons newPersons: [PresencePerson],
                                     at time: Instant) -> [PresenceEvent] {
        var events = advance(to: time)
        let now = monotonic(time)
        let old = self

        // Built only if someone has an open visit, and once: a search of the new persons
        // for each of them would be quadratic at a busy door under a large roster.
        lazy var newIds = Set(newPersons.lazy.map(\.id))
        for person in old.persons.indices {
            let slot = old.persons[person]
            guard slot.state.hasOpenVisit, !newIds.contains(slot.id) else { continue }
            let since = slot.state == .unconfirmed ? slot.unconfirmedSince : now
            let series = slot.state == .unconfirmed ? slot.unconfirmedSeries : []
            counters.checkouts &+= 1
            events.append(.checkout(old.decision(person: person, tag: Int(slot.decidingTag), timestamp: since,
                                                 decidedAt: now, series: series, handshake: nil)))
        }

        settings = newSettings
        capacity = newSettings.ringCapacity
        minSamples = newSettings.effectiveMinSamples
        limits = Limits(newSettings)
        build(persons: newPersons)

        var oldTagById: [String: Int] = [:]
        for (index, tag) in old.tags.enumerated() where oldTagById[tag.id] == nil { oldTagById[tag.id] = index }
        for slot in tags.indices {
            guard let previous = oldTagById[tags[slot].id] else { continue }
            let tag = old.tags[previous]
            tags[slot].lastSample = tag.lastSample
            tags[slot].address = tag.address
            tags[slot].addressType = tag.addressType
            tags[slot].txPower = tag.txPower
            tags[slot].proofAt = tag.proofAt
            tags[slot].proofRoundTripMs = tag.proofRoundTripMs
            tags[slot].lockedUntil = tag.lockedUntil
            // The newest samples that fit the new ring, oldest first.
            let count = Int(tag.count)
            for i in max(0, count - capacity) ..< count {
                var position = Int(tag.head) + i
                if position >= old.capacity { position -= old.capacity }
                let index = previous * old.capacity + position
                append(slot: slot, time: old.ringTime(at: index), rssi: old.ringRSSI[index])
            }
        }
        for person in persons.indices {
            guard let previous = old.personById[persons[person].id].map(Int.init) else { continue }
            let slot = old.persons[previous]
            persons[person].state = slot.state
            persons[person].lastSample = slot.lastSample
            persons[person].visitStart = slot.visitStart
            persons[person].visitStartWall = slot.visitStartWall
            persons[person].unconfirmedSince = slot.unconfirmedSince
            persons[person].unconfirmedSeries = slot.unconfirmedSeries
            persons[person].waitingReported = slot.waitingReported
            persons[person].restoreHeld = slot.restoreHeld
            let decidingId = slot.decidingTag >= 0 ? old.tags[Int(slot.decidingTag)].id : nil
            if let match = persons[person].tagSlots.first(where: { tags[$0].id == decidingId }) {
                persons[person].decidingTag = Int32(match)
            }
        }
        rescheduleAll()
        recountOpenVisits()
        // Timers recomputed with the new durations may already be due. New RSSI
        // thresholds are applied from the person's next sample.
        for person in persons.indices where persons[person].state != .outside {
            fireDue(person: person, now: now, into: &events)
            schedule(person: person)
        }
        return events
    }
}
