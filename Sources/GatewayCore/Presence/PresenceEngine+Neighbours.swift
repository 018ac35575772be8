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

    /// NEARBY → PRESENT's extra condition (docs/neighbours.md, "The rule"): this door leads
    /// the neighbours' strongest fresh sighting by the margin, for `confirm` when nobody
    /// holds the visit, for `handover_s` when a neighbour holds it, each confirmed by a
    /// neighbour's report made `catchUp` after this door heard the person best since the
    /// lead began; or a neighbour holds them and they came through this doorway, and this
    /// door has led the neighbours' latest by the margin for `handover_s` (the passage
    /// confirmed, within `leadHysteresisDB` of it), or, the passage confirmed, been the
    /// strongest against them for 10 s; or nobody
    /// holds them and this door has been the strongest, above `enter_rssi`, for 10 s.
    /// "The strongest", in both, is the lead over the neighbours' latest smoothed over 3 s
    /// above 0, and leading their latest at the moment of the checkin.
    /// `above`: the signal exceeds `enter_rssi` (the caller checks it for the
    /// checkin itself).
    mutating func neighboursLetCheckIn(person: Int, now: Int64, above: Bool) -> Bool {
        guard neighbourhood != nil else { return true }
        // `above` says a tag has a filtered value.
        let own = signal(person: person, now: now)?.rssi ?? Int(Int8.min)
        // The 10 s as the strongest count above `enter_rssi` only, judged on this door's
        // signal smoothed over 3 s: at a seat a few dB above `enter_rssi` (the back of a
        // room) one median's noise would otherwise start the 10 s over. A lead goes on
        // counting while the signal dips to `enter_rssi` or below; the checkin itself
        // waits for a signal above it.
        let aboveSteadily = neighbourhood!.smoothSignal(person: person, rssi: own, now: now) > Float(limits.enter)
        if !aboveSteadily { neighbourhood!.strongestSince[person] = Self.never }
        // Over 30 s: where the person was before a passage, against where they are now.
        let ownLevel = own > Int(Int8.min) ? neighbourhood!.smoothOwnLevel(person: person, rssi: own, now: now)
            : neighbourhood!.ownLevel[person]
        if neighbourhood!.waitingAtStart(now) { return false }
        guard let best = neighbourhood!.table.strongest(person: person, at: now) else { return true }
        let heldElsewhere = neighbourhood!.table.heldElsewhere(person: person, at: now)
        // `best` is fresh, so a latest sighting is too.
        let latest = neighbourhood!.table.latest(person: person, at: now)!
        let latestLead = own - latest.rssi
        // "The strongest" on the lead over the neighbours' latest sightings smoothed over
        // 3 s, for a mover as for a person nobody holds: at a seat by the wall, where this
        // door leads by a few dB, one report's noise does not start the 10 s over. Against
        // their latest, not the strongest of their last 3 s: that is a peak of three
        // reports' noise, a few dB above the neighbour's signal, and broke the 10 s at such
        // a seat as surely as the noise did.
        let wasStrongest = neighbourhood!.wasStrongest(person: person, now: now)
        let leadBefore = neighbourhood!.recentSmoothedLead(person: person, now: now)
        var smoothed = neighbourhood!.smoothLead(person: person, lead: latestLead, now: now)
        // The doorway is passed in a second or two: this door's newest samples say so
        // before its median does. A person passing through it is heard strongly here; a
        // seat by the wall next door, heard through the wall, is not, even when a deep fade
        // at the neighbour makes this door lead it by the doorway's lead. Heard at the
        // doorway's level on the median, by a door that was not the strongest just before
        // (a person walking out of this room passes the same doorway), the passage needs no
        // second report to confirm it: the neighbours' reports lag a walk through a doorway,
        // and the second often came too late.
        let passing = max(own, recentSignal(person: person, now: now) ?? own)
        //
        // Walked from the neighbour's doorway to this one (2.4 m, about one report period),
        // the person is in this doorway while the neighbour's latest report still has them
        // by its own, and the doorway's lead never shows. The lead's swing does: behind by
        // the margin just before (smoothed over 3 s), ahead by it now, with the doorway's
        // level here. A seat by the wall is steady on both sides, and heard here below the
        // doorway's level: confirmed at once.
        let swung = leadBefore.map(neighbourhood!.isBehindByMargin) ?? false && neighbourhood!.reachesMargin(latestLead)
        if passing >= limits.enter + NeighbourSetup.doorwayAboveEnterDB, swung || neighbourhood!.isDoorwayLead(passing - latest.rssi) {
            let atDoorwayLevel = own >= limits.enter + NeighbourSetup.doorwayStrongAboveEnterDB && !wasStrongest
            // Once the passage is confirmed, the lead smoothed over 3 s starts afresh from
            // the lead now: the person has changed places, and 3 s of where they were (the
            // neighbour's doorway, 15 dB behind) kept "the strongest" below 0 for 2-3 s
            // more, which every mover seated by the wall waited on top of the 10 s.
            if neighbourhood!.doorwayLead(person: person, report: latest.time, now: now, heardAtDoorwayLevel: atDoorwayLevel || swung) {
                smoothed = neighbourhood!.restartSmoothedLead(person: person, lead: latestLead, now: now)
                // Two of a steady holder's reports in a fade look like a passage here: a
                // person seated by the wall next door, whom this door hears through it at
                // the doorway's lower level. Withdrawn if the holder hears them again as
                // before while this door hears them no better than before.
                if heldElsewhere, !(atDoorwayLevel || swung) {
                    neighbourhood!.passageByTwoReports(person: person, ownLevel: ownLevel, now: now)
                }
            }
        }
        neighbourhood!.withdrawPassageIfHolderBack(person: person, own: own, heldElsewhere: heldElsewhere, now: now)
        if heldElsewhere, neighbourhood!.cameThroughDoorway(person: person, now: now) {
            let confirmed = neighbourhood!.cameThroughDoorwayConfirmed(person: person, now: now)
            let byMargin = takesOver(person: person, now: now, lead: latestLead, reportMade: latest.time, confirmed: confirmed)
            guard confirmed else {
                neighbourhood!.strongestSince[person] = Self.never
                return byMargin
            }
            // Or, as for a person nobody leads, after 10 s as the strongest above
            // `enter_rssi` (SPEC §17's exception), and stronger than the latest sighting at
            // that moment: a mover seated where this door leads by less than the margin (by
            // the wall) is not left at the door they came from. Only for one whose passage
            // through this doorway is confirmed: a seat across the wall is held where it is.
            let longEnough = strongestLongEnough(person: person, now: now, above: aboveSteadily, smoothedLead: smoothed,
                                                 latestLead: latestLead, reportMade: latest.time)
            return byMargin || longEnough
        }
        // Against the strongest of the neighbours' sightings of the last 3 s: a moment of
        // fading there does not make this door lead.
        let lead = own - best.rssi
        var takes = false
        // The whole margin throughout, also while a neighbour holds them: a lead that a
        // moment of fading there began does not go on at less (a seat by the wall).
        if neighbourhood!.reachesMargin(lead) {
            if neighbourhood!.leadingSince[person] == Self.never || own > Int(neighbourhood!.ownPeak[person]) {
                neighbourhood!.ownPeak[person] = Int8(clamping: own)
                neighbourhood!.ownPeakAt[person] = now
            }
            if neighbourhood!.leadingSince[person] == Self.never { neighbourhood!.leadingSince[person] = now }
            let began = neighbourhood!.leadingSince[person]
            let needed = heldElsewhere ? neighbourhood!.handover : neighbourhood!.confirm
            // The neighbours' reports lag this door's radio (a report period, the bus):
            // someone walking past this doorway into the next room leads here until a
            // report made `catchUp` after this door heard them best (the strongest of its
            // signal since the lead began: the doorway) catches up with them. A lead can
            // begin in the corridor before this doorway, where this door is the nearer.
            takes = now &- began >= needed && best.time &- neighbourhood!.ownPeakAt[person] >= catchUp
        } else {
            neighbourhood!.leadingSince[person] = Self.never
        }
        guard !heldElsewhere else {
            neighbourhood!.strongestSince[person] = Self.never
            return takes
        }
        let longEnough = strongestLongEnough(person: person, now: now, above: aboveSteadily, smoothedLead: smoothed,
                                             latestLead: latestLead, reportMade: best.time)
        return takes || longEnough
    }

    /// How long after this door heard a person best a neighbour's report must be made to
    /// say where they went: `confirm` (the walk from this doorway to the next, and a
    /// report period) and half the window, as long as the neighbour's median takes to
    /// follow them there. A report made `confirm` after the walk past this doorway still
    /// had, in half its window or more, the corridor behind the neighbour's front wall, and
    /// this door took a person already in the next room (docs/neighbours.md, "The rule";
    /// the neighbours' `window_s` is taken to be this door's, as a site sets `[presence]`
    /// alike at its doors). Half of 3 s at most: a longer window lags more, but waiting
    /// for half of it would hold every such checkin and handover back as long (a window of
    /// 25 s for slow tags, 12.5 s), and the 3 s of a sighting's freshness bound the rest of
    /// the rule alike.
    var catchUp: Int64 {
        neighbourhood!.confirm &+ min(limits.window, NeighbourSetup.freshness.nanosecondsClamped) / 2
    }

    /// This door has been the strongest (its lead over the neighbours' latest sightings
    /// smoothed over 3 s above 0), above `enter_rssi`, for 10 s, confirmed by a neighbour's
    /// report made `confirm` after that began, and leads their latest at this moment: the
    /// smoothed lead lags a person walking out of this room to the next door's, whose report
    /// already hears them better.
    mutating func strongestLongEnough(person: Int, now: Int64, above: Bool, smoothedLead: Float, latestLead: Int,
                                      reportMade: Int64) -> Bool {
        guard above, smoothedLead > 0, !neighbourhood!.passedNeighboursDoorwayLast(person: person, now: now) else {
            neighbourhood!.strongestSince[person] = Self.never
            return false
        }
        if neighbourhood!.strongestSince[person] == Self.never { neighbourhood!.strongestSince[person] = now }
        let strongest = neighbourhood!.strongestSince[person]
        return now &- strongest >= neighbourhood!.strongestAlone && reportMade &- strongest >= neighbourhood!.confirm
            && latestLead > 0
    }

    /// A neighbour that leads this door by the doorway's lead has the person at its own
    /// doorway: one who passed this doorway on the way there walked past it, and did not
    /// come in through it.
    mutating func forgetDoorwayPassedBy(person: Int, neighbourRSSI: Int, now: Int64) {
        guard neighbourhood!.doorwayAt[person] != Self.never else { return }
        let heard = heardSignal(person: person, now: now)
        let own = max(heard ?? Int(Int8.min), recentSignal(person: person, now: now) ?? Int(Int8.min))
        if neighbourhood!.isDoorwayLead(neighbourRSSI - own) { neighbourhood!.forgetDoorway(person: person) }
    }

    /// A person a neighbour holds who came in through this door's doorway (a mover, not a
    /// seat across the wall): taken after this door has led the neighbours' latest
    /// sightings by `margin_db` for `handover_s` (SPEC §17: a checkin leads every fresh
    /// sighting by the margin), confirmed by a report made `confirm` after that began. With
    /// the passage `confirmed`, a lead that reached the margin goes on within
    /// `leadHysteresisDB` of it: the two doors' medians differ by about 2 dB of noise, and
    /// at a lead a few dB above the margin each report's dip below it started the
    /// `handover_s` over.
    mutating func takesOver(person: Int, now: Int64, lead: Int, reportMade: Int64, confirmed: Bool) -> Bool {
        let keeps = confirmed
            ? neighbourhood!.keepsLead(lead, since: neighbourhood!.leadingSince[person])
            : neighbourhood!.reachesMargin(lead)
        guard keeps else {
            neighbourhood!.leadingSince[person] = Self.never
            return false
        }
        if neighbourhood!.leadingSince[person] == Self.never { neighbourhood!.leadingSince[person] = now }
        let began = neighbourhood!.leadingSince[person]
        return now &- began >= neighbourhood!.handover && reportMade &- began >= neighbourhood!.confirm
    }

    /// For a person with an open visit: since when a neighbour has led this door by the
    /// margin (the checkout's timestamp); when a neighbour that holds the visit hears the
    /// person better than this door (any lead: it took them with the margin, or as the
    /// strongest for 10 s), the person has moved: checked out here at once; within 3 s of
    /// this door's checkin, only when its latest leads by the margin.
    mutating func followLead(person: Int, now: Int64, into events: inout [PresenceEvent]) {
        guard neighbourhood != nil else { return }
        guard persons[person].state.hasOpenVisit,
              let best = neighbourhood!.table.strongest(person: person, at: now) else {
            neighbourhood!.ledSince[person] = Self.never
            return
        }
        let since = neighbourhood!.ledBy[person] == best.neighbour ? neighbourhood!.ledSince[person] : Self.never
        // Within 3 s of this door's checkin, a holder's claim is one it made before it
        // heard of that checkin, and its strongest of the last 3 s a sighting from before
        // this door took the person from it: handed back only if its latest leads this
        // door by the margin (it hears them better now, beyond noise). Otherwise two doors
        // near a tie each yielded to the other's older word, and the person was at neither.
        let checkedIn = neighbourhood!.checkedInAt[person]
        let justCheckedIn = checkedIn != Self.never && now &- checkedIn < neighbourhood!.confirm
        // Not heard here (no filtered value): any fresh sighting leads.
        let leads = signal(person: person, now: now).map { heard in
            guard best.holds else { return neighbourhood!.keepsLead(best.rssi - heard.rssi, since: since) }
            guard justCheckedIn else { return best.rssi > heard.rssi }
            let latest = neighbourhood!.table.latestRSSI(person: person, neighbour: best.neighbour)
            return neighbourhood!.reachesMargin(latest - heard.rssi)
        } ?? true
        guard leads else {
            neighbourhood!.ledSince[person] = Self.never
            return
        }
        if since == Self.never {
            neighbourhood!.ledSince[person] = max(best.time, persons[person].visitStart)
            neighbourhood!.ledBy[person] = Int16(best.neighbour)
        }
        guard best.holds else { return }
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
        // The leads here end with the state change (`setState`).
        neighbourhood!.forgetDoorway(person: person)
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

    /// Whether the site bus is up: while it is down no report can arrive, and a neighbour's
    /// latest report counts for its 3 s only (SPEC §17: the bus down, the door decides
    /// alone for its neighbours).
    public mutating func neighbourBus(up: Bool) {
        neighbourhood?.table.busUp = up
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
        switch neighbourhood!.table.accept(sender: report.sender, wall: report.wallMilliseconds, made: made, at: now) {
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
            let word = neighbourhood!.table.record(person: person, neighbour: neighbour, rssi: sighting.rssi, holds: sighting.holds,
                                                   passageConfirmed: sighting.passageConfirmed, time: made, at: now)
            neighbourhood!.neighbourSaid(word, person: person, neighbour: neighbour, made: made, now: now)
            if word != .late {
                neighbourhood!.holderSighting(person: person, neighbour: neighbour, rssi: Int(sighting.rssi), holds: sighting.holds,
                                              made: made)
            }
            forgetDoorwayPassedBy(person: person, neighbourRSSI: Int(sighting.rssi), now: now)
            fireDue(person: person, now: now, into: &events)
            if persons[person].state == .nearby { evaluate(person: person, now: now, into: &events) }
            followLead(person: person, now: now, into: &events)
            schedule(person: person)
        }
        return .success(events)
    }

    /// What this door reports now: every person heard with a filtered RSSI above
    /// `exit_rssi` − 10 dB, and whether their visit is open here. A person PRESENT here whom
    /// the window holds no sample of (a few advertisements lost) is named at the level last
    /// reported: left out, they would look to the neighbours like nobody hears them here,
    /// and a neighbour hearing them through the wall would check them in at once.
    public mutating func sightingsToReport(at time: Instant) -> [SightingReport.Sighting] {
        guard let hashes = neighbourhood?.personHashes else { return [] }
        let now = monotonic(time)
        let floor = limits.exit - NeighbourSetup.reportBelowExitDB
        var sightings: [SightingReport.Sighting] = []
        for person in persons.indices where persons[person].state != .outside {
            var heard = heardSignal(person: person, now: now)
            if heard == nil, persons[person].state == .present, neighbourhood!.lastReported[person] != Int8.min {
                heard = Int(neighbourhood!.lastReported[person])
            }
            guard let rssi = heard, rssi > floor else { continue }
            neighbourhood!.lastReported[person] = Int8(clamping: rssi)
            sightings.append(SightingReport.Sighting(person: hashes[person], rssi: Int8(clamping: rssi),
                                                     holds: persons[person].state.hasOpenVisit,
                                                     passageConfirmed: neighbourhood!.cameThroughDoorwayConfirmed(person: person, now: now)))
        }
        return sightings
    }

    /// The person's newest signal: per tag the mean of its newest two samples in the
    /// window (rounded down, as the median of two), the strongest tag's; nil with none.
    mutating func recentSignal(person: Int, now: Int64) -> Int? {
        var best: Int?
        for slot in persons[person].tagSlots {
            guard let (base, head, count) = filterWindow(slot: slot, now: now, atLeast: 1) else { continue }
            var newest = head &+ count &- 1
            if newest >= capacity { newest &-= capacity }
            var value = Int(ringRSSI[base &+ newest])
            if count >= 2 {
                let before = newest == 0 ? capacity &- 1 : newest &- 1
                let sum = value &+ Int(ringRSSI[base &+ before])
                value = sum >= 0 ? sum / 2 : -((1 &- sum) / 2)
            }
            if let current = best, value <= current { continue }
            best = value
        }
        return best
    }

    /// What a report says this door hears of the person: the median of every sample in the
    /// window, one enough (docs/neighbours.md). `min_samples` guards this door's own
    /// transitions; a neighbour that heard a report without a person would take them as
    /// not heard here, and a lost advertisement or two must not make a person by the wall
    /// next door look like nobody hears them.
    mutating func heardSignal(person: Int, now: Int64) -> Int? {
        var best: Int?
        for slot in persons[person].tagSlots {
            guard let value = filtered(slot: slot, now: now, atLeast: 1) else { continue }
            if let current = best, value <= current { continue }
            best = value
        }
        return best
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
