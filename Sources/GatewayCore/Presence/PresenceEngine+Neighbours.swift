import EventLoop

/// The rule of neighbouring doors (docs/neighbours.md) inside the presence engine: a
/// person is checked in at the one door that hears them best, and a present person whom
/// a neighbour has taken is checked out here as moved. Every function here is a no-op
/// returning "as docs/presence.md" when no neighbours are configured.
extension PresenceEngine {
    /// Neighbours from now (nil: none, this door decides alone). A door that has just
    /// started waits up to 2 s for them before its first checkin.
    public mutating func configureNeighbours(_ setup: NeighbourSetup?, at time: Instant) {
        let now = monotonic(time)
        guard let setup else {
            neighbourhood = nil
            return
        }
        neighbourhood = Neighbourhood(setup: setup, personIds: persons.map(\.id), startedAt: now)
    }

    public var hasNeighbours: Bool { neighbourhood != nil }

    /// NEARBY → PRESENT's extra condition: this door leads every fresh neighbour sighting by
    /// the margin (for `handover_s` when a neighbour holds the visit: the person moves
    /// here as that neighbour hands them over); or, nobody leading, it has been the
    /// strongest (above `enter_rssi`, and no neighbour holding the visit) for 10 s.
    /// `above`: the signal exceeds `enter_rssi`.
    mutating func neighboursLetCheckIn(person: Int, now: Int64, above: Bool) -> Bool {
        guard neighbourhood != nil else { return true }
        guard above else {
            neighbourhood!.strongestSince[person] = Self.never
            neighbourhood!.leadingSince[person] = Self.never
            return false
        }
        if neighbourhood!.waitingAtStart(now) { return false }
        guard let best = neighbourhood!.table.strongest(person: person, at: now) else { return true }
        // `above` says a tag has a filtered value.
        let own = signal(person: person, now: now)?.rssi ?? Int(Int8.min)
        let lead = own - best.rssi
        let heldElsewhere = neighbourhood!.table.heldElsewhere(person: person, at: now)
        if neighbourhood!.reachesMargin(lead) {
            guard heldElsewhere else { return true }
            if neighbourhood!.leadingSince[person] == Self.never { neighbourhood!.leadingSince[person] = now }
            return now &- neighbourhood!.leadingSince[person] >= neighbourhood!.handover
        }
        neighbourhood!.leadingSince[person] = Self.never
        guard lead > 0, !heldElsewhere else {
            neighbourhood!.strongestSince[person] = Self.never
            return false
        }
        if neighbourhood!.strongestSince[person] == Self.never { neighbourhood!.strongestSince[person] = now }
        return now &- neighbourhood!.strongestSince[person] >= neighbourhood!.strongestAlone
    }

    /// For a person with an open visit: whether a neighbour leads this door by the margin
    /// and since when (the sighting that showed it); when it has for `handover_s` and
    /// holds the visit there, the person has moved: checked out here at once. While the
    /// neighbour holds the visit too, any lead counts: of two doors holding one person,
    /// the weaker yields (the stronger took them with the margin, as its radio saw it).
    mutating func followLead(person: Int, now: Int64, into events: inout [PresenceEvent]) {
        guard neighbourhood != nil else { return }
        guard persons[person].state.hasOpenVisit,
              let best = neighbourhood!.table.strongest(person: person, at: now) else {
            neighbourhood!.ledSince[person] = Self.never
            return
        }
        // Not heard here (no filtered value): any fresh sighting leads.
        let leads = signal(person: person, now: now).map {
            best.holds ? best.rssi > $0.rssi : neighbourhood!.reachesMargin(best.rssi - $0.rssi)
        } ?? true
        guard leads else {
            neighbourhood!.ledSince[person] = Self.never
            return
        }
        if neighbourhood!.ledSince[person] == Self.never || Int(neighbourhood!.ledBy[person]) != best.neighbour {
            neighbourhood!.ledSince[person] = max(best.time, persons[person].visitStart)
            neighbourhood!.ledBy[person] = Int16(best.neighbour)
        }
        guard best.holds, now &- neighbourhood!.ledSince[person] >= neighbourhood!.handover else { return }
        moveOut(person: person, to: best.neighbour, now: now, into: &events)
    }

    /// The checkout of a person who moved to `neighbour`: stamped when its lead began
    /// (when UNCONFIRMED began, if that was earlier), decided now.
    mutating func moveOut(person: Int, to neighbour: Int, now: Int64, into events: inout [PresenceEvent]) {
        let since = neighbourhood!.ledSince[person]
        let slot = persons[person]
        let unconfirmed = slot.state == .unconfirmed
        let timestamp = unconfirmed ? min(slot.unconfirmedSince, since) : since
        let series = unconfirmed ? slot.unconfirmedSeries : self.series(slot: Int(slot.decidingTag), now: now)
        neighbourhood!.ledSince[person] = Self.never
        neighbourhood!.strongestSince[person] = Self.never
        neighbourhood!.leadingSince[person] = Self.never
        let next: PresenceState = now &- slot.lastSample >= limits.awayAfter ? .outside : .nearby
        endVisit(person: person, timestamp: timestamp, decidedAt: now, series: series, next: next, stateAt: now,
                 movedTo: neighbourhood!.table.ids[neighbour], into: &events)
    }

    /// A handover due by `now` is decided (moved, or the lead found over).
    mutating func fireHandover(person: Int, now: Int64, into events: inout [PresenceEvent]) {
        guard let due = neighbourhood?.handoverDeadline(person: person), due <= now else { return }
        followLead(person: person, now: now, into: &events)
        // Still due (the lead stands but the sighting that showed it aged out at the
        // deadline): the lead is over.
        if let due = neighbourhood?.handoverDeadline(person: person), due <= now, persons[person].state.hasOpenVisit {
            neighbourhood!.ledSince[person] = Self.never
        }
    }

    /// A verified report of a neighbour, made `age` before `time` (its sender's clock
    /// against this door's): its sightings count from when they were made. Persons it
    /// names are decided on again (a checkin a neighbour held back, a handover).
    public mutating func neighbourReport(_ report: SightingReport, age: Duration,
                                         at time: Instant) -> Result<[PresenceEvent], SightingRefusal> {
        guard neighbourhood != nil else { return .failure(.notANeighbour) }
        let now = monotonic(time)
        let made = now &- max(age.nanosecondsClamped, 0)
        let neighbour: Int
        switch neighbourhood!.table.accept(sender: report.sender, wall: report.wallMilliseconds, at: now) {
        case let .success(index): neighbour = index
        case let .failure(refusal): return .failure(refusal)
        }
        var events: [PresenceEvent] = []
        for sighting in report.sightings {
            guard let index = neighbourhood!.personByHash[sighting.person] else {
                neighbourhood!.unknownPersons &+= 1
                continue
            }
            let person = Int(index)
            neighbourhood!.table.record(person: person, neighbour: neighbour, rssi: sighting.rssi, holds: sighting.holds,
                                        time: made, at: now)
            fireDue(person: person, now: now, into: &events)
            if persons[person].state == .nearby { evaluate(person: person, now: now, into: &events) }
            followLead(person: person, now: now, into: &events)
            schedule(person: person)
        }
        return .success(events)
    }

    /// What this door reports now: every person heard with a filtered RSSI above
    /// `exit_rssi` − 10 dB, and whether their visit is open here.
    public mutating func sightingsToReport(at time: Instant) -> [SightingReport.Sighting] {
        guard let hashes = neighbourhood?.personHashes else { return [] }
        let now = monotonic(time)
        let floor = limits.exit - NeighbourSetup.reportBelowExitDB
        var sightings: [SightingReport.Sighting] = []
        for person in persons.indices where persons[person].state != .outside {
            guard let signal = signal(person: person, now: now), signal.rssi > floor else { continue }
            sightings.append(SightingReport.Sighting(person: hashes[person], rssi: Int8(clamping: signal.rssi),
                                                     holds: persons[person].state.hasOpenVisit))
        }
        return sightings
    }

    /// Neighbours heard within the last 10 s, and how many are known (`"*"`: seen so far).
    public func neighboursHeard(at time: Instant) -> (heard: Int, known: Int) {
        guard let neighbourhood else { return (0, 0) }
        return (neighbourhood.table.heard(at: max(time.nanoseconds, latest), silence: neighbourhood.silence),
                neighbourhood.table.ids.count)
    }

    /// The neighbours' gateway ids and whether each is silent (not heard for 10 s) at `time`.
    public func neighbourSilence(at time: Instant) -> [(id: String, silent: Bool)] {
        guard let neighbourhood else { return [] }
        let now = max(time.nanoseconds, latest)
        return neighbourhood.table.ids.indices.map {
            (neighbourhood.table.ids[$0], neighbourhood.table.isSilent($0, at: now, silence: neighbourhood.silence))
        }
    }

    /// Sightings that named a person this door does not know.
    public var sightingsOfUnknownPersons: Int { neighbourhood?.unknownPersons ?? 0 }
}
