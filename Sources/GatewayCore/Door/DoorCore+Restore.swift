import AttendanceEvents
import EventLoop

/// Start and reload: restored state, removed persons, a new roster or settings.
extension DoorCore {
    /// The stored presence at start (records by person id, and the `LastHeardDigest`).
    /// Open visits come back open, their timers held until the scan has run for
    /// `lost_after_s` (`scanningStarted`; docs/presence.md); a person no longer configured
    /// who had an open visit gets their checkout now.
    ///
    /// Normally given before any report. When the store could not be opened at start the
    /// door ran without it and this comes when it first opens (nothing of this run is
    /// stored yet): a person decided on meanwhile keeps what was decided, and their stored
    /// open visit is checked out ahead of everything decided in this run, so no visit is
    /// left without its checkout and no new check-in comes before it.
    public mutating func restore(stored: [String: [UInt8]], at now: Instant, clock: WallClockReading) -> [DoorAction] {
        var actions: [DoorAction] = []
        // Whether the clock is synchronised, before anything is decided: a checkout of a
        // removed person below must not say so on a Pi that booted without the time.
        followClock(clock, at: now, into: &actions)
        var stored = stored
        var digest = LastHeardDigest()
        if let bytes = stored.removeValue(forKey: LastHeardDigest.storageKey) {
            if let decoded = LastHeardDigest(decoding: bytes) {
                digest = decoded
            } else {
                actions.append(.log(DoorLogLine(.warning, "unreadable last-heard checkpoint ignored")))
            }
        }
        var records: [PersistedPresence] = []
        for (personId, bytes) in stored.sorted(by: { $0.key < $1.key }) {
            if let record = PersistedPresence(decoding: bytes) {
                records.append(digest.applied(to: record))
            } else {
                actions.append(.log(DoorLogLine(.warning, "unreadable persisted presence ignored", ["person_id": personId])))
            }
        }
        // Persons heard or decided on in this run (a store opened late) keep their state.
        var decidedMeanwhile: [PersistedPresence] = []
        records.removeAll { record in
            guard presence.state(of: record.personId) != nil, touched(record.personId) else { return false }
            decidedMeanwhile.append(record)
            return true
        }
        // `restore` returns the records it ignored (persons no longer configured, records
        // that make no sense). The wall time of "now" goes through the engine's own
        // mapping, so a restored visit start maps back to the very milliseconds it was
        // stored with (the checkout's key).
        if !followsReplayClock { presence.wallClock = WallClockMapping(anchor: now, wallMilliseconds: clock.wallMilliseconds) }
        let ignored = presence.restore(records: records, now: now, wallNow: presence.wallClock.wallMilliseconds(at: now),
                                       scanStartsNow: false)
        let ignoredPersons = Set(ignored.map(\.personId))
        for record in ignored where record.state != .outside {
            actions.append(.log(DoorLogLine(.warning, "persisted presence ignored",
                                            ["person_id": record.personId, "state": "\(record.state)"])))
        }
        for record in records where !ignoredPersons.contains(record.personId) {
            guard let state = presence.state(of: record.personId), state != .outside else { continue }
            actions.append(.log(DoorLogLine(.info, "presence restored", ["person_id": record.personId, "state": "\(state)"])))
        }
        let wallNow = presence.wallClock.wallMilliseconds(at: now)
        // Ahead of what this run decided (all of it still waits: the store was not open).
        var earlier: [DoorPendingEvent] = []
        for record in ignored where presence.state(of: record.personId) == nil {
            if let checkout = checkOutStored(record, wallNow: wallNow) {
                earlier.append(DoorPendingEvent(event: checkout, record: .delete, tagId: record.tagId, rssi: nil,
                                                reason: "no longer configured"))
            }
        }
        for record in decidedMeanwhile {
            guard let checkout = checkOutStored(record, wallNow: wallNow) else { continue }
            let state = presence.state(of: record.personId).map { "\($0)" } ?? "-"
            actions.append(.log(DoorLogLine(.warning, "stored visit checked out: decided again while the store was closed",
                                            ["person_id": record.personId, "state": state])))
            earlier.append(DoorPendingEvent(event: checkout, record: .current, tagId: record.tagId, rssi: nil,
                                            reason: "decided again while the store was closed"))
        }
        queue.prepend(earlier)
        applyHold()
        commitIfIdle(at: now, into: &actions)
        // Every record again, with the digest's last samples in it (the digest then goes).
        checkpoints.changedPersons.formUnion(stored.keys)
        checkpoint(durable: true, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }

    /// The checkout of a stored open visit the engine does not restore: a person who left
    /// the configuration while the agent was not running, or one decided on again before
    /// the store opened. The engine cannot decide it (it does not know that visit), yet a
    /// restart never loses a checkout, and a reload that removes a person checks them out
    /// at once; a restart after the same edit must too. As the engine does on restart, the
    /// visit is taken to have become UNCONFIRMED at the last sample heard before the stop
    /// (or when it was recorded as UNCONFIRMED); it is decided now. The person's record goes
    /// in the same transaction, so a crash in between decides it again next time, under
    /// the same key.
    func checkOutStored(_ record: PersistedPresence, wallNow now: Int64) -> AttendanceEvent? {
        guard record.state.hasOpenVisit, let visitStart = record.visitStartWallMilliseconds else { return nil }
        let unconfirmed = record.state == .unconfirmed ? record.unconfirmedSinceWallMilliseconds : nil
        // Clamped into [visit start, now]: a clock set back must not order them wrongly.
        let since = min(max(unconfirmed ?? record.lastSampleWallMilliseconds ?? visitStart, visitStart), max(now, visitStart))
        var event = AttendanceEvent(
            id: EventIdentifier.uuidV4(), sequence: 0, type: .checkout, userId: record.personId, gateway: gateway,
            timestampMilliseconds: since, decidedAtMilliseconds: max(now, since), visitStartMilliseconds: visitStart,
            beacon: BeaconInfo(tag: record.tagId, address: record.address, identities: []),
            rssiSeries: [], txPower: record.txPower, handshake: nil, appVersion: appVersion
        )
        event.clockSynced = clockSynced
        return event
    }

    /// Heard, or with a state or an event of this run: not the stored state any more.
    func touched(_ personId: String) -> Bool {
        presence.state(of: personId) != .outside || presence.lastHeardWallMilliseconds(of: personId) != nil
            || queue.isWaiting(personId)
    }

    /// A new roster or new settings (SIGHUP, or the server's roster): persons whose id
    /// remains keep their presence; removed persons who were present are checked out
    /// (their records go with their checkouts); connection wishes are decided afresh
    /// (tag indices may have moved), the proof book is kept for tags that remain.
    public mutating func reload(_ setup: DoorSetup, at now: Instant) -> [DoorAction] {
        var actions: [DoorAction] = []
        // The checkouts of removed persons are decided under the configuration of their
        // visit: their old tag indices' identities, and the gateway their checkin named
        // (the idempotency key pairs the two by it).
        let events = presence.reconfigure(settings: setup.settings, persons: setup.persons, at: now)
        handle(events, at: now, into: &actions)
        gateway = setup.gateway
        appVersion = setup.appVersion
        // Resolutions cached for IRKs that remain, and the budget, carry over.
        matcher.reconfigure(tags: setup.tags)
        checkpoints.rosterChanged()
        identitiesByTagIndex = setup.tags.map(\.identities)
        // Unwanted first: a moved index must not keep the connection of the tag it was.
        for tagIndex in wishes.wanted.keys.sorted() { actions.append(.unwant(tagIndex: tagIndex)) }
        connectionTags = setup.connectionTags
        wishes = ConnectionWishes(tags: setup.connectionTags.mapValues(\.wish))
        tagIndexById = [:]
        for (index, tag) in setup.connectionTags.sorted(by: { $0.key < $1.key }) where tagIndexById[tag.tagId] == nil {
            tagIndexById[tag.tagId] = index
        }
        book.retain(tags: Set(setup.connectionTags.values.map(\.tagId)))
        if setup.neighbours != presence.neighbourhood?.setup || gateway.id != sightingVerifier?.ownId {
            configureNeighbours(setup.neighbours, at: now)
        }
        // A shorter `leave_after_s` checkpoints more often from now on (its staleness bound).
        nextCheckpoint = min(nextCheckpoint, now + checkpointInterval)
        updateWishes(at: now, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }
}
