import EventLoop
import HCI

/// The restart rule (see docs/presence.md): state goes out as wall-clock records and comes back with
/// every open visit intact.
extension PresenceEngine {
    /// How far a recorded visit start may lie ahead of the clock at restore and still be
    /// the one its checkin carried: a day covers any real clock correction.
    static let plausibleClockStepMilliseconds: Int64 = 86_400_000

    /// The person's state to persist; the agent stores it with the event that changed it
    /// (and, for `lastSample` freshness, may store it periodically).
    public func record(for personId: String) -> PersistedPresence? {
        guard let index = personById[personId] else { return nil }
        let person = persons[Int(index)]
        let tag = person.decidingTag >= 0 && Int(person.decidingTag) < tags.count ? tags[Int(person.decidingTag)] : nil
        func wall(_ time: Int64) -> Int64? {
            time == Self.never ? nil : wallClock.wallMilliseconds(at: Instant(nanoseconds: time))
        }
        return PersistedPresence(
            personId: person.id, state: person.state,
            visitStartWallMilliseconds: !person.state.hasOpenVisit ? nil
                : person.visitStartWall != Self.never ? person.visitStartWall : wall(person.visitStart),
            unconfirmedSinceWallMilliseconds: person.state == .unconfirmed ? wall(person.unconfirmedSince) : nil,
            lastSampleWallMilliseconds: wall(person.lastSample),
            tagId: tag?.id ?? "", address: tag?.address ?? BluetoothAddress(rawValue: 0),
            addressType: tag?.addressType ?? .publicDevice, txPower: tag?.txPower.map(Int.init)
        )
    }

    /// When the person was last heard, in wall-clock milliseconds (for `LastHeardDigest`).
    public func lastHeardWallMilliseconds(of personId: String) -> Int64? {
        guard let index = personById[personId] else { return nil }
        let time = persons[Int(index)].lastSample
        return time == Self.never ? nil : wallClock.wallMilliseconds(at: Instant(nanoseconds: time))
    }

    /// Every person's record, e.g. for a checkpoint at shutdown.
    public var records: [PersistedPresence] { persons.compactMap { record(for: $0.id) } }

    /// Restores persisted state at start, before any sample. `now` and `wallNow` are read
    /// together and become the engine's `wallClock`, so a restored visit start maps back
    /// to exactly the stored milliseconds (and the checkout's idempotency key matches).
    /// `scanStartsNow`: the scan is taken to start at `now` (for a test of the engine
    /// alone); the door says when its scan starts (`scanningStarted`).
    ///
    /// - PRESENT and UNCONFIRMED come back as they were, their timers held until the scan
    ///   has run for `lost_after_s` (`PresenceEngine+RestoreHold`): no second checkin, and
    ///   no checkout of a person the door could not hear while it was down. PRESENT's lost
    ///   timer counts from the last sample before shutdown, UNCONFIRMED's leave timer from
    ///   when UNCONFIRMED began.
    /// - NEARBY keeps its away timer; OUTSIDE stays OUTSIDE. Timers that ran out meanwhile
    ///   fire on the next `advance` (held ones once the hold is over).
    /// - Records of persons no longer configured, or that do not make sense (an open
    ///   visit without a start), are ignored and returned so that the agent can log them;
    ///   times later than `wallNow` (the clock was set back) are taken as `wallNow`.
    @discardableResult
    public mutating func restore(records: [PersistedPresence], now: Instant, wallNow: Int64,
                                 scanStartsNow: Bool = true) -> [PersistedPresence] {
        wallClock = WallClockMapping(anchor: now, wallMilliseconds: wallNow)
        let nowNs = monotonic(now)
        var ignored: [PersistedPresence] = []
        for record in records {
            guard let index = personById[record.personId].map(Int.init) else {
                ignored.append(record)
                continue
            }
            func instant(_ wall: Int64?) -> Int64? {
                wall.map { min(wallClock.instant(atWallMilliseconds: $0).nanoseconds, nowNs) }
            }
            let lastSample = instant(record.lastSampleWallMilliseconds)
            var person = persons[index]
            person.state = .outside
            person.visitStart = Self.never
            person.visitStartWall = Self.never
            person.unconfirmedSince = Self.never
            person.unconfirmedSeries = []
            person.lastSample = lastSample ?? Self.never
            if let slot = person.tagSlots.first(where: { tags[$0].id == record.tagId }) ?? person.tagSlots.first {
                person.decidingTag = Int32(slot)
                if tags[slot].id == record.tagId {
                    tags[slot].address = record.address
                    tags[slot].addressType = record.addressType
                    tags[slot].txPower = record.txPower.map { Int8(clamping: $0) }
                }
            }
            switch record.state {
            case .outside:
                break
            case .nearby:
                guard lastSample != nil else { ignored.append(record); break }
                person.state = .nearby
            case .present, .unconfirmed:
                guard let visitStart = instant(record.visitStartWallMilliseconds) else {
                    ignored.append(record)
                    break
                }
                person.state = record.state
                person.visitStart = visitStart
                // Repeated as recorded (the checkin's idempotency key has it), even when the
                // clock has since been set back; only a start absurdly far ahead is not.
                person.visitStartWall = record.visitStartWallMilliseconds
                    .flatMap { $0 <= wallNow &+ Self.plausibleClockStepMilliseconds ? $0 : nil } ?? Self.never
                // PRESENT's lost timer counts from the later of the last sample and the
                // visit's start (a proof may have opened it after the last sample).
                if person.lastSample == Self.never || person.lastSample < visitStart { person.lastSample = visitStart }
                if record.state == .unconfirmed {
                    // Never before the visit, and never after now (a clock set back).
                    person.unconfirmedSince = max(visitStart,
                                                  instant(record.unconfirmedSinceWallMilliseconds) ?? person.lastSample)
                }
            }
            persons[index] = person
            if person.state.hasOpenVisit {
                holdRestored(person: index, lastKnown: max(person.lastSample, person.unconfirmedSince), now: nowNs)
            }
        }
        rescheduleAll()
        recountOpenVisits()
        if scanStartsNow { scanningStarted(at: now) }
        return ignored
    }
}
