import AttendanceEvents
import EventLoop
import HCI

/// Samples and the signal-driven transitions of docs/presence.md.
extension PresenceEngine {
    /// The RSSI a report can carry (HCI: −127…20 dBm; 127 means "not available").
    public static let validRSSI = -127 ... 20

    /// One advertising report of a configured tag. `tagIndex` is `TagMatch.tagIndex`.
    ///
    /// Timers of this person that are due at `time` fire first (so a late sample cannot
    /// rescue a visit whose leave debounce already ran out), then the sample is filtered
    /// and the person moves if the signal says so.
    public mutating func sample(tagIndex: Int, rssi: Int, address: BluetoothAddress, addressType: AddressType,
                                txPower: Int?, at time: Instant) -> [PresenceEvent] {
        guard let slot = tagSlot(forTagIndex: tagIndex) else {
            counters.unknownTag &+= 1
            return []
        }
        guard Self.validRSSI.contains(rssi) else {
            counters.invalidRSSI &+= 1
            return []
        }
        counters.samples &+= 1
        let now = monotonic(time)
        let person = Int(tags[slot].person)
        var events: [PresenceEvent] = []
        fireDue(person: person, now: now, into: &events)

        append(slot: slot, time: now, rssi: Int8(truncatingIfNeeded: rssi))
        tags[slot].address = address
        tags[slot].addressType = addressType
        if let txPower {
            tags[slot].txPower = Int8(clamping: txPower)
        }
        persons[person].lastSample = now

        if persons[person].state == .outside {
            setState(person: person, to: .nearby, at: now, into: &events)
        }
        evaluate(person: person, now: now, into: &events)
        if neighbourhood != nil { followLead(person: person, now: now, into: &events) }
        schedule(person: person)
        return events
    }

    /// The signal-driven transitions: NEARBY → PRESENT, PRESENT → UNCONFIRMED,
    /// UNCONFIRMED → PRESENT.
    mutating func evaluate(person: Int, now: Int64, into events: inout [PresenceEvent]) {
        let state = persons[person].state
        guard state != .outside else { return }
        // Each state compares the signal with one threshold: no median need be computed
        // unless the person moves (then the deciding tag is looked up).
        let threshold = state == .present ? limits.exit : limits.enter
        guard let above = signal(person: person, now: now, exceeds: threshold) else { return }
        switch state {
        case .nearby:
            // Held (a paused door, or a store that refuses events): nobody new is checked
            // in; the person stays NEARBY and is checked in at a sample after the hold.
            if neighbourhood != nil, !neighboursLetCheckIn(person: person, now: now, above: above) { return }
            guard above, !checkinsHeld else { return }
            var handshake: AttendanceEvent.Handshake?
            if persons[person].requireProof {
                switch proof(person: person, now: now) {
                case let .valid(roundTripMs):
                    handshake = .init(ok: true, roundTripMilliseconds: roundTripMs)
                case let .missing(reason):
                    if !persons[person].waitingReported {
                        persons[person].waitingReported = true
                        events.append(.waitingForProof(personId: persons[person].id, reason: reason))
                    }
                    return
                }
            }
            let tag = strongestTag(person: person, now: now)
            persons[person].visitStart = now
            if neighbourhood != nil { neighbourhood!.checkedInAt[person] = now }
            persons[person].visitStartWall = wallClock.wallMilliseconds(at: Instant(nanoseconds: now))
            persons[person].decidingTag = tag
            persons[person].waitingReported = false
            setState(person: person, to: .present, at: now, into: &events)
            let series = self.series(slot: Int(tag), now: now)
            counters.checkins &+= 1
            events.append(.checkin(decision(person: person, tag: Int(tag), timestamp: now, decidedAt: now,
                                            series: series, handshake: handshake)))
        case .present:
            guard !above else { return }
            beginUnconfirmed(person: person, tag: strongestTag(person: person, now: now), at: now, into: &events)
        case .unconfirmed:
            guard above else { return }
            // Same visit: no event, and no new proof needed.
            persons[person].unconfirmedSince = Self.never
            persons[person].unconfirmedSeries = []
            setState(person: person, to: .present, at: now, into: &events)
        case .outside:
            return
        }
    }

    mutating func beginUnconfirmed(person: Int, tag: Int32, at now: Int64, into events: inout [PresenceEvent]) {
        persons[person].unconfirmedSince = now
        persons[person].decidingTag = tag
        persons[person].unconfirmedSeries = series(slot: Int(tag), now: now)
        setState(person: person, to: .unconfirmed, at: now, into: &events)
    }

    mutating func setState(person: Int, to state: PresenceState, at now: Int64, into events: inout [PresenceEvent]) {
        let from = persons[person].state
        guard from != state else { return }
        persons[person].state = state
        // The rule's leads (docs/neighbours.md) run within one stretch of NEARBY: one from
        // before a checkin, or before the person was out of hearing, is no lead now.
        if neighbourhood != nil { neighbourhood!.stopLeads(person: person) }
        if from.hasOpenVisit != state.hasOpenVisit { openVisits += state.hasOpenVisit ? 1 : -1 }
        events.append(.stateChanged(personId: persons[person].id, from: from, to: state, at: Instant(nanoseconds: now)))
    }

    func decision(person: Int, tag: Int, timestamp: Int64, decidedAt: Int64, series: [Int8],
                  handshake: AttendanceEvent.Handshake?) -> PresenceDecision {
        let slot = tag >= 0 && tag < tags.count ? tags[tag] : nil
        let visitStart = persons[person].visitStart
        let visitStartWall = persons[person].visitStartWall
        return PresenceDecision(
            personId: persons[person].id,
            tagId: slot?.id ?? "",
            tagIndex: slot?.matcherIndex ?? -1,
            address: slot?.address ?? BluetoothAddress(rawValue: 0),
            addressType: slot?.addressType ?? .publicDevice,
            timestamp: Instant(nanoseconds: timestamp),
            decidedAt: Instant(nanoseconds: decidedAt),
            visitStart: Instant(nanoseconds: visitStart),
            timestampWallMilliseconds: wallClock.wallMilliseconds(at: Instant(nanoseconds: timestamp)),
            decidedAtWallMilliseconds: wallClock.wallMilliseconds(at: Instant(nanoseconds: decidedAt)),
            visitStartWallMilliseconds: visitStartWall != Self.never
                ? visitStartWall : wallClock.wallMilliseconds(at: Instant(nanoseconds: visitStart)),
            rssiSeries: series.map(Int.init),
            txPower: slot?.txPower.map(Int.init),
            handshake: handshake
        )
    }
}
