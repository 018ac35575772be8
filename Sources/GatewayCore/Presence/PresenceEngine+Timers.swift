import EventLoop

/// The timers of docs/presence.md: lost (PRESENT), leave (UNCONFIRMED) and away (NEARBY).
extension PresenceEngine {
    /// Fires every timer due at or before `now`; returns what happened, in deadline order.
    public mutating func advance(to instant: Instant) -> [PresenceEvent] {
        let now = monotonic(instant)
        releaseRestoreHolds(now: now)
        var events: [PresenceEvent] = []
        while let top = heap.first, top.time <= now {
            _ = heap.popFirst()
            let person = Int(top.person)
            // Stale: the person was rescheduled (earlier) or needs no timer any more.
            guard person >= 0, person < persons.count, persons[person].scheduledAt == top.time else { continue }
            persons[person].scheduledAt = Self.never
            fireDue(person: person, now: now, into: &events)
            schedule(person: person)
        }
        return events
    }

    /// The person's one running timer, if any: the state's own deadline, later while a
    /// restored visit is held until the scan has had its chance to hear the person.
    func deadline(person: Int) -> Int64? {
        guard let handover = neighbourhood?.handoverDeadline(person: person) else { return ownDeadline(person: person) }
        return min(ownDeadline(person: person) ?? handover, handover)
    }

    /// The state's deadline, held for a restored visit.
    func ownDeadline(person: Int) -> Int64? {
        guard let due = stateDeadline(person: person) else { return nil }
        guard restoreHoldsActive, persons[person].restoreHeld, persons[person].state.hasOpenVisit else { return due }
        return restoreHoldUntil == Self.awaitingScan ? nil : max(due, restoreHoldUntil)
    }

    /// The state's own deadline: when its transition happens (and is stamped), whenever
    /// it is decided.
    func stateDeadline(person: Int) -> Int64? {
        // Field by field: copying the whole slot would retain its id and arrays per sample.
        switch persons[person].state {
        case .outside: return nil
        case .nearby: return Self.saturatingAdd(persons[person].lastSample, limits.awayAfter)
        // A proof can open the visit after the last sample: silence counts from the later.
        case .present: return Self.saturatingAdd(max(persons[person].lastSample, persons[person].visitStart), limits.lostAfter)
        case .unconfirmed: return Self.saturatingAdd(persons[person].unconfirmedSince, limits.leaveAfter)
        }
    }

    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// Runs the person's timers that are due at `now`. A transition happens at its
    /// state's deadline (that is the time of the state change and of a checkout's
    /// UNCONFIRMED start), even when a restore hold or a late driver decides it later; a
    /// checkout is decided at `now`. At most three steps (PRESENT → UNCONFIRMED → NEARBY
    /// → OUTSIDE), when the driver was late for all of them.
    mutating func fireDue(person: Int, now: Int64, into events: inout [PresenceEvent]) {
        if neighbourhood != nil { fireHandover(person: person, now: now, into: &events) }
        for _ in 0 ..< 4 {
            guard let decided = deadline(person: person), decided <= now,
                  let due = stateDeadline(person: person) else { return }
            switch persons[person].state {
            case .outside:
                return
            case .nearby:
                persons[person].waitingReported = false
                setState(person: person, to: .outside, at: due, into: &events)
            case .present:
                // Lost: no sample for lost_after_s. The last heard tag stands for the visit.
                beginUnconfirmed(person: person, tag: lastHeardTag(person: person), at: due, into: &events)
            case .unconfirmed:
                let slot = persons[person]
                let silentFor = due &- slot.lastSample
                let next: PresenceState = silentFor >= limits.awayAfter ? .outside : .nearby
                endVisit(person: person, timestamp: slot.unconfirmedSince, decidedAt: now, series: slot.unconfirmedSeries,
                         next: next, stateAt: due, movedTo: nil, into: &events)
            }
        }
    }

    /// The visit's checkout: the person leaves for `next` at `stateAt`.
    mutating func endVisit(person: Int, timestamp: Int64, decidedAt now: Int64, series: [Int8], next: PresenceState,
                           stateAt: Int64, movedTo: String?, into events: inout [PresenceEvent]) {
        counters.checkouts &+= 1
        var checkout = decision(person: person, tag: Int(persons[person].decidingTag), timestamp: timestamp,
                                decidedAt: now, series: series, handshake: nil)
        checkout.movedTo = movedTo
        persons[person].visitStart = Self.never
        persons[person].visitStartWall = Self.never
        persons[person].unconfirmedSince = Self.never
        persons[person].unconfirmedSeries = []
        persons[person].waitingReported = false
        persons[person].restoreHeld = false
        setState(person: person, to: next, at: stateAt, into: &events)
        events.append(.checkout(checkout))
    }

    func lastHeardTag(person: Int) -> Int32 {
        var best = persons[person].decidingTag
        var bestTime = Self.never
        for slot in persons[person].tagSlots where tags[slot].lastSample > bestTime {
            best = Int32(slot)
            bestTime = tags[slot].lastSample
        }
        return best
    }

    /// Makes sure the person's deadline is in the heap. An entry at or before the
    /// deadline is enough: when it pops, the person is rescheduled at the true one.
    mutating func schedule(person: Int) {
        guard let due = deadline(person: person) else {
            persons[person].scheduledAt = Self.never
            return
        }
        let current = persons[person].scheduledAt
        if current != Self.never, current <= due { return }
        heap.push(.init(time: due, person: Int32(person)))
        persons[person].scheduledAt = due
        // Earlier reschedules leave stale entries; bound them.
        if heap.count > 2 * persons.count + 64 { rebuildHeap() }
    }

    mutating func rebuildHeap() {
        heap.removeAll(keepingCapacity: true)
        for person in persons.indices where persons[person].scheduledAt != Self.never {
            heap.push(.init(time: persons[person].scheduledAt, person: Int32(person)))
        }
    }

    /// Schedules every person from scratch (after a restore or a reload).
    mutating func rescheduleAll() {
        heap.removeAll(keepingCapacity: true)
        for person in persons.indices {
            persons[person].scheduledAt = Self.never
            schedule(person: person)
        }
    }
}
