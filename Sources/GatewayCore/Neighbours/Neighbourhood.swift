import EventLoop

/// The presence engine's part for neighbouring doors (docs/neighbours.md): what the
/// neighbours said (`NeighbourTable`), each person's name on the bus, and per person the
/// three clocks of the rule: since when this door has been the strongest alone (to take a
/// person nobody leads after 10 s), since when it has led a person a neighbour holds (to
/// take them after `handover_s`), and since when a neighbour has led by the margin (to
/// hand a present person over after `handover_s`). Absent when no neighbours are
/// configured: then nothing of this runs and the engine decides as docs/presence.md says.
struct Neighbourhood: Sendable {
    static let never = Int64.min

    let setup: NeighbourSetup
    var table: NeighbourTable
    /// The margin in tenths of a dB: leads are compared in integers.
    let marginTenths: Int
    let handover: Int64
    let confirm: Int64
    let strongestAlone: Int64
    let silence: Int64
    let doorwayMemory: Int64
    let leadSmoothing: Int64
    /// Until when a door that has just started takes nobody in (unless every listed
    /// neighbour has been heard by then): `never` once over.
    var startWaitUntil: Int64

    var personHashes: [PersonHash] = []
    var personByHash: [PersonHash: Int32] = [:]
    var strongestSince: [Int64] = []
    /// Since when this door has led a person whom a neighbour holds by the margin.
    var leadingSince: [Int64] = []
    var ledSince: [Int64] = []
    var ledBy: [Int16] = []
    /// This door's strongest signal of the person since `leadingSince`, and when it was.
    var ownPeak: [Int8] = []
    var ownPeakAt: [Int64] = []
    /// When this door last led a person by the doorway's lead (they came in through its
    /// doorway).
    var doorwayAt: [Int64] = []
    /// When the neighbours' report was made against which this door first led the person
    /// by the doorway's lead (`never`: none lately).
    var doorwayFirstReport: [Int64] = []
    /// When the passage was confirmed, by a second report or heard at the doorway's level
    /// (`never`: not lately).
    var doorwayConfirmedAt: [Int64] = []
    /// The neighbour that said it confirmed the person's passage through its doorway after
    /// one through this door's (−1: none), when that was first heard here, and when its
    /// latest sighting saying so was made: "the strongest" waits while it stands
    /// (`passedNeighboursDoorwayLast`).
    var neighbourPassageBy: [Int16] = []
    var neighbourPassageAt: [Int64] = []
    var neighbourPassageSaid: [Int64] = []
    /// The person's lead over the neighbours' latest fresh sightings, smoothed over
    /// `leadSmoothing` (dB), and when it was last brought up to date (`never`: not lately):
    /// "the strongest" of docs/neighbours.md's rule, brought up to date at every decision.
    var smoothedLead: [Float] = []
    var smoothedAt: [Int64] = []
    /// This door's signal of the person smoothed over `leadSmoothing` (dBm), and when it
    /// was last brought up to date, as the lead.
    var smoothedSignal: [Float] = []
    var smoothedSignalAt: [Int64] = []
    /// When this door last checked the person in (`never`: not since the start or the
    /// roster): a restored visit is no checkin.
    var checkedInAt: [Int64] = []
    /// Sightings of persons this door does not know (another door's roster).
    var unknownPersons = 0
    /// The filtered RSSI this door last reported of each person (`Int8.min`: none).
    var lastReported: [Int8] = []
    /// Per person, the neighbour whose reports say it holds the visit (−1: none), since
    /// when without a gap, and its reports' RSSI smoothed over `steadySpan` (at the time
    /// of its last report): the holder's steady level.
    var steadyHolder: [Int16] = []
    var steadyHolderSince: [Int64] = []
    var holderLevel: [Float] = []
    var holderLevelAt: [Int64] = []
    /// This door's signal of the person smoothed over `steadySpan`.
    var ownLevel: [Float] = []
    var ownLevelAt: [Int64] = []
    /// A passage confirmed by two reports of a steady holder: withdrawn once the holder
    /// reports at least `withdrawAt` while this door hears at most `withdrawIfOwnAtMost`
    /// (`Int8.min`: none pending).
    var withdrawAt: [Int8] = []
    var withdrawIfOwnAtMost: [Int8] = []

    init(setup: NeighbourSetup, personIds: [String], startedAt now: Int64) {
        self.setup = setup
        table = NeighbourTable(neighbours: setup.neighbours, persons: personIds.count)
        marginTenths = Int((max(setup.marginDB, 0) * 10).rounded())
        handover = max(setup.handover.nanosecondsClamped, 0)
        confirm = NeighbourSetup.confirm.nanosecondsClamped
        strongestAlone = NeighbourSetup.strongestAlone.nanosecondsClamped
        silence = NeighbourSetup.silence.nanosecondsClamped
        doorwayMemory = NeighbourSetup.doorwayMemory.nanosecondsClamped
        leadSmoothing = NeighbourSetup.leadSmoothing.nanosecondsClamped
        startWaitUntil = now &+ NeighbourSetup.startWait.nanosecondsClamped
        layOut(personIds: personIds)
    }

    /// A new roster: every person's rule state starts afresh (sightings come again within
    /// a second; a lead counts again from the next one).
    mutating func layOut(personIds: [String]) {
        table.layOut(persons: personIds.count)
        personHashes = personIds.map(setup.keys.personHash)
        personByHash = [:]
        personByHash.reserveCapacity(personIds.count)
        for (index, hash) in personHashes.enumerated() where personByHash[hash] == nil { personByHash[hash] = Int32(index) }
        strongestSince = Array(repeating: Self.never, count: personIds.count)
        leadingSince = Array(repeating: Self.never, count: personIds.count)
        ledSince = Array(repeating: Self.never, count: personIds.count)
        ledBy = Array(repeating: -1, count: personIds.count)
        ownPeak = Array(repeating: Int8.min, count: personIds.count)
        ownPeakAt = Array(repeating: Self.never, count: personIds.count)
        doorwayAt = Array(repeating: Self.never, count: personIds.count)
        doorwayFirstReport = Array(repeating: Self.never, count: personIds.count)
        doorwayConfirmedAt = Array(repeating: Self.never, count: personIds.count)
        neighbourPassageBy = Array(repeating: -1, count: personIds.count)
        neighbourPassageAt = Array(repeating: Self.never, count: personIds.count)
        neighbourPassageSaid = Array(repeating: Self.never, count: personIds.count)
        smoothedLead = Array(repeating: 0, count: personIds.count)
        smoothedAt = Array(repeating: Self.never, count: personIds.count)
        smoothedSignal = Array(repeating: 0, count: personIds.count)
        smoothedSignalAt = Array(repeating: Self.never, count: personIds.count)
        checkedInAt = Array(repeating: Self.never, count: personIds.count)
        lastReported = Array(repeating: Int8.min, count: personIds.count)
        steadyHolder = Array(repeating: -1, count: personIds.count)
        steadyHolderSince = Array(repeating: Self.never, count: personIds.count)
        holderLevel = Array(repeating: 0, count: personIds.count)
        holderLevelAt = Array(repeating: Self.never, count: personIds.count)
        ownLevel = Array(repeating: 0, count: personIds.count)
        ownLevelAt = Array(repeating: Self.never, count: personIds.count)
        withdrawAt = Array(repeating: Int8.min, count: personIds.count)
        withdrawIfOwnAtMost = Array(repeating: Int8.min, count: personIds.count)
    }

    /// This door's signal of the person at `now`, smoothed over `steadySpan`.
    mutating func smoothOwnLevel(person: Int, rssi: Int, now: Int64) -> Float {
        Self.smooth(&ownLevel[person], at: &ownLevelAt[person], toward: Float(rssi), now: now,
                    over: NeighbourSetup.steadySpan.nanosecondsClamped)
    }

    /// A neighbour's sighting of the person, made at `made` (in order): its level joins the
    /// holder's steady level when it says it holds the visit; a holder that stops saying
    /// so, another neighbour holding them, or a gap of `silence` starts it afresh.
    mutating func holderSighting(person: Int, neighbour: Int, rssi: Int, holds: Bool, made: Int64) {
        guard holds else {
            if Int(steadyHolder[person]) == neighbour { steadyHolder[person] = -1 }
            return
        }
        if Int(steadyHolder[person]) != neighbour || holderLevelAt[person] == Self.never || made < holderLevelAt[person]
            || made &- holderLevelAt[person] >= silence {
            steadyHolder[person] = Int16(neighbour)
            steadyHolderSince[person] = made
            holderLevelAt[person] = Self.never
        }
        _ = Self.smooth(&holderLevel[person], at: &holderLevelAt[person], toward: Float(rssi), now: made,
                        over: NeighbourSetup.steadySpan.nanosecondsClamped)
    }

    /// A passage just confirmed by two reports (not heard at the doorway's level, not the
    /// lead's swing) of a person a neighbour holds: when that neighbour has held them
    /// steadily, it is withdrawn if the holder hears them again at its steady level while
    /// this door's level has not risen (docs/neighbours.md, "The rule").
    mutating func passageByTwoReports(person: Int, ownLevel own: Float, now: Int64) {
        guard steadyHolder[person] >= 0,
              now &- steadyHolderSince[person] >= NeighbourSetup.steadyHolderFor.nanosecondsClamped else {
            withdrawAt[person] = Int8.min
            return
        }
        withdrawAt[person] = Int8(clamping: Int((holderLevel[person] - Float(NeighbourSetup.holderBackWithinDB)).rounded(.up)))
        withdrawIfOwnAtMost[person] = Int8(clamping: Int(own.rounded()) + NeighbourSetup.ownRiseDB)
    }

    /// Withdraws a passage pending withdrawal (`passageByTwoReports`) once the holder hears
    /// the person again at its steady level and this door (`own`) no better than before;
    /// forgets the pending withdrawal once the holder no longer holds them or the passage
    /// is no longer confirmed.
    mutating func withdrawPassageIfHolderBack(person: Int, own: Int, heldElsewhere: Bool, now: Int64) {
        guard withdrawAt[person] != Int8.min else { return }
        let holder = Int(steadyHolder[person])
        guard heldElsewhere, holder >= 0, cameThroughDoorwayConfirmed(person: person, now: now) else {
            withdrawAt[person] = Int8.min
            return
        }
        if table.latestRSSI(person: person, neighbour: holder) >= Int(withdrawAt[person]), own <= Int(withdrawIfOwnAtMost[person]) {
            forgetDoorway(person: person)
            withdrawAt[person] = Int8.min
        }
    }

    /// The person's lead at `now`, smoothed: each new value moves the smoothed one by the
    /// share of `leadSmoothing` that has passed since the last (an exponential mean over
    /// time, whatever the rate of reports); after `leadSmoothing` without one, it starts
    /// afresh from the new value.
    mutating func smoothLead(person: Int, lead: Int, now: Int64) -> Float {
        Self.smooth(&smoothedLead[person], at: &smoothedAt[person], toward: Float(lead), now: now, over: leadSmoothing)
    }

    /// The smoothed lead starts afresh from `lead`: the person has just passed this
    /// doorway, and what was heard where they were before says nothing of where they are.
    mutating func restartSmoothedLead(person: Int, lead: Int, now: Int64) -> Float {
        smoothedLead[person] = Float(lead)
        smoothedAt[person] = now
        return smoothedLead[person]
    }

    /// The person's leads here (by the margin, as the strongest) are over: their state
    /// changed.
    mutating func stopLeads(person: Int) {
        leadingSince[person] = Self.never
        strongestSince[person] = Self.never
    }

    /// The smoothed lead, brought up to date within the last `leadSmoothing`; nil if not.
    func recentSmoothedLead(person: Int, now: Int64) -> Float? {
        let last = smoothedAt[person]
        guard last != Self.never, now >= last, now &- last < leadSmoothing else { return nil }
        return smoothedLead[person]
    }

    /// Whether this door was the strongest for the person just before `now`: its smoothed
    /// lead, brought up to date within the last `leadSmoothing`, above 0.
    func wasStrongest(person: Int, now: Int64) -> Bool {
        (recentSmoothedLead(person: person, now: now) ?? 0) > 0
    }

    /// This door's signal of the person at `now`, smoothed as `smoothLead` smooths the lead.
    mutating func smoothSignal(person: Int, rssi: Int, now: Int64) -> Float {
        Self.smooth(&smoothedSignal[person], at: &smoothedSignalAt[person], toward: Float(rssi), now: now, over: leadSmoothing)
    }

    /// An exponential mean over time: `value` moves toward `sample` by the share of `span`
    /// that has passed since `at`; after `span` without a sample it starts afresh.
    static func smooth(_ value: inout Float, at last: inout Int64, toward sample: Float, now: Int64, over span: Int64) -> Float {
        if last == never || now < last || now &- last >= span {
            value = sample
        } else {
            value += (sample - value) * Float(now &- last) / Float(span)
        }
        last = now
        return value
    }

    /// Whether the start's wait still holds check-ins back at `now`.
    mutating func waitingAtStart(_ now: Int64) -> Bool {
        guard startWaitUntil != Self.never else { return false }
        let everyoneHeard = !table.anyDoor && table.lastHeard.allSatisfy { $0 != NeighbourTable.never }
        if now >= startWaitUntil || everyoneHeard {
            startWaitUntil = Self.never
            return false
        }
        return true
    }

    /// A smoothed `lead` (dB) is behind by the margin or more.
    func isBehindByMargin(_ lead: Float) -> Bool { -lead * 10 >= Float(marginTenths) }

    /// `lead` dB (this door's signal minus another's) reaches the margin.
    func reachesMargin(_ lead: Int) -> Bool { lead &* 10 >= marginTenths }

    /// `lead` dB is the doorway's: the margin and `doorwayLeadDB` more.
    func isDoorwayLead(_ lead: Int) -> Bool { reachesMargin(lead &- NeighbourSetup.doorwayLeadDB) }

    /// This door leads the person by the doorway's lead against a neighbour's report made
    /// at `report`: they came through this doorway. Confirmed once two of the neighbours'
    /// reports made within `confirm` of each other, and a report period apart, show it (a
    /// neighbour's report of a checkin can follow its last by 200 ms, its median over
    /// nearly the same samples: the same dip, not a second look), or at once when `heardAtDoorwayLevel`
    /// (heard at the doorway's level on this door's median, by a door that was not the
    /// strongest before: `NeighbourSetup.doorwayStrongAboveEnterDB`): one report caught in
    /// a deep fade at the neighbour is not a person in this doorway, and only a confirmed
    /// passage lets this door take a person a neighbour holds as the strongest, without
    /// the margin, or keep a lead by the margin within the hysteresis.
    /// Returns whether this confirmed the passage (it was not confirmed before).
    mutating func doorwayLead(person: Int, report: Int64, now: Int64, heardAtDoorwayLevel: Bool) -> Bool {
        let wasConfirmed = cameThroughDoorwayConfirmed(person: person, now: now)
        doorwayAt[person] = now
        let first = doorwayFirstReport[person]
        if first == Self.never || report &- first > confirm || report < first {
            doorwayFirstReport[person] = report
        } else if report &- first >= NeighbourSetup.secondLookAfter.nanosecondsClamped {
            doorwayConfirmedAt[person] = now
        }
        if heardAtDoorwayLevel { doorwayConfirmedAt[person] = now }
        return !wasConfirmed && cameThroughDoorwayConfirmed(person: person, now: now)
    }

    /// The person's passage through this doorway is forgotten (they went on to a
    /// neighbour's, or they moved out).
    mutating func forgetDoorway(person: Int) {
        doorwayAt[person] = Self.never
        doorwayConfirmedAt[person] = Self.never
        doorwayFirstReport[person] = Self.never
    }

    /// Whether the person passed a neighbour's doorway last: that neighbour's fresh
    /// sighting says it confirmed their passage, first heard after a passage through this
    /// doorway, and this door has confirmed none since.
    func passedNeighboursDoorwayLast(person: Int, now: Int64) -> Bool {
        let neighbour = Int(neighbourPassageBy[person])
        guard neighbour >= 0, table.counts(neighbourPassageSaid[person], neighbour: neighbour, at: now) else { return false }
        return doorwayConfirmedAt[person] == Self.never || doorwayConfirmedAt[person] < neighbourPassageAt[person]
    }

    /// What a neighbour's sighting made at `made` said of the person's passage through its
    /// doorway (`word`, from the table), heard at `now`.
    mutating func neighbourSaid(_ word: NeighbourTable.PassageWord, person: Int, neighbour: Int, made: Int64, now: Int64) {
        switch word {
        case .late, .notSaid:
            return
        case .began:
            // After a passage through this doorway (or another neighbour's that stood):
            // that passage is forgotten, and this neighbour's stands.
            if cameThroughDoorwayConfirmed(person: person, now: now) || passedNeighboursDoorwayLast(person: person, now: now) {
                neighbourPassageBy[person] = Int16(neighbour)
                neighbourPassageAt[person] = now
                neighbourPassageSaid[person] = made
                forgetDoorway(person: person)
            }
        case .ended:
            if Int(neighbourPassageBy[person]) == neighbour { neighbourPassageBy[person] = -1 }
        case .stillSaid:
            if Int(neighbourPassageBy[person]) == neighbour { neighbourPassageSaid[person] = made }
        }
    }

    /// Whether the passage was confirmed (by two reports, or heard at the doorway's level)
    /// within `doorwayMemory`.
    func cameThroughDoorwayConfirmed(person: Int, now: Int64) -> Bool {
        doorwayConfirmedAt[person] != Self.never && now &- doorwayConfirmedAt[person] <= doorwayMemory
    }

    /// Whether the person came in through this door's doorway within `doorwayMemory`.
    func cameThroughDoorway(person: Int, now: Int64) -> Bool {
        doorwayAt[person] != Self.never && now &- doorwayAt[person] <= doorwayMemory
    }

    /// A lead that began (`since` is not `never`) still counts within the hysteresis of
    /// the margin; not begun, it must reach the margin.
    func keepsLead(_ lead: Int, since: Int64) -> Bool {
        reachesMargin(since == Self.never ? lead : lead &+ NeighbourSetup.leadHysteresisDB)
    }

    /// When the person's handover is due: the lead's start plus `handover_s`, while the
    /// leading neighbour's fresh sighting says it holds the visit (it has checked them in).
    func handoverDeadline(person: Int) -> Int64? {
        guard person < ledSince.count, ledSince[person] != Self.never else { return nil }
        let neighbour = Int(ledBy[person])
        guard neighbour >= 0, neighbour < table.stride, table.cellHolds[person * table.stride + neighbour] else { return nil }
        return ledSince[person] &+ handover
    }
}
