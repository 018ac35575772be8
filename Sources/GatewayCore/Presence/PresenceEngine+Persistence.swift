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
    ///
    /// - PRESENT at shutdown → UNCONFIRMED, leave timer from the last sample before
    ///   shutdown: no second checkin; the checkout comes unless the person is heard again.
    /// - UNCONFIRMED stays UNCONFIRMED with its timer; NEARBY keeps its away timer;
    ///   OUTSIDE stays OUTSIDE. Timers that ran out meanwhile fire on the next `advance`.
    /// - Records of persons no longer configured, or that do not make sense (an open
    ///   visit without a start), are ignored and returned so that the agent can log them;
    ///   times later than `wallNow` (the clock was set back) are taken as `wallNow`.
    @discardableResult
    public mutating func restore(records: [PersistedPresence], now: Instant, wallNow: Int64) -> [PersistedPresence] {
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
                // The leave timer: from UNCONFIRMED's start, or for PRESENT from the last
                // sample (or, without one, the visit's start).
                // Never before the visit (a proof may have opened it after the last sample).
                let since = max(visitStart, record.state == .unconfirmed
                    ? instant(record.unconfirmedSinceWallMilliseconds) ?? lastSample ?? visitStart
                    : lastSample ?? visitStart)
                person.state = .unconfirmed
                person.visitStart = visitStart
                // Repeated as recorded (the checkin's idempotency key has it), even when the
                // clock has since been set back; only a start absurdly far ahead is not.
                person.visitStartWall = record.visitStartWallMilliseconds
                    .flatMap { $0 <= wallNow &+ Self.plausibleClockStepMilliseconds ? $0 : nil } ?? Self.never
                person.unconfirmedSince = since
                if person.lastSample == Self.never { person.lastSample = since }
            }
            persons[index] = person
        }
        rescheduleAll()
        recountOpenVisits()
        return ignored
    }
}
