import Advertisements
import AttendanceEvents
import EventLoop
import HCI

/// Every decision of the door agent (`beacon-gateway run`) as one sans-IO state machine:
/// advertising reports, timers, wall-clock readings, proof outcomes, connections, reloads,
/// restored state, commit results and the server's mode go in, with the time; actions
/// come out (`DoorAction`) for the driver (`GatewayAgent`) to perform in order.
///
/// Its parts: `TagMatcher` (which tag a report is), `PresenceEngine` (who arrives and
/// leaves), `ConnectionWishes` and `ProofBook` (which tags to connect to, lockouts),
/// `DoorCommitQueue` (the one committer of checkins, checkouts and spoof_suspected, with
/// one failure policy), `DoorCheckpoints` (what presence is saved between events, and
/// when). It never reads a clock or touches a file: tests run it in virtual time
/// (`Tests/GatewayCoreTests/Door*Tests.swift`).
///
/// Hot path: `report(_:at:)` costs a match and a sample, O(1) in the roster, and returns
/// an empty array (no allocation) unless something was decided.
public struct DoorCore: Sendable {
    public internal(set) var presence: PresenceEngine
    var matcher: TagMatcher
    /// Per matcher tag index: the tag's configured identities (the event's beacon block).
    var identitiesByTagIndex: [[TagIdentity]]
    var gateway: GatewayIdentity
    var appVersion: String
    var connectionTags: [Int: DoorConnectionTag]
    var tagIndexById: [String: Int] = [:]
    var wishes: ConnectionWishes
    public internal(set) var book = ProofBook()
    var queue = DoorCommitQueue()
    var checkpoints = DoorCheckpoints()
    var clockSync = ClockSyncState()
    /// Event times follow a replay's recorded clock (set once, at its first report).
    public internal(set) var followsReplayClock = false
    public internal(set) var mode = DoorMode.active
    public internal(set) var counters = Counters()
    /// Inside a batch of reports (between `beginReports` and `endReports`): the one record
    /// of it, which the driver asks at every report.
    public internal(set) var inBatch = false
    /// When the periodic work (retries) and the checkpoint are next due.
    var nextHousekeeping: Instant
    var nextCheckpoint: Instant
    /// With neighbours: the verifier of their reports, when this door's next report is
    /// due, what was counted and which neighbours were last logged silent.
    var sightingVerifier: SightingVerifier?
    var nextSightingReport: Instant?
    /// When the report of a checkin here is due (nil: none waits); when this door's last
    /// report was made, and the wall time it carried (the next is later: a neighbour takes
    /// only newer reports).
    var checkinReportDue: Instant?
    var lastSightingReport: Instant?
    var lastSightingWall = Int64.min
    public internal(set) var sightings = SightingCounters()
    var silentNeighboursLogged: Set<String> = []

    public struct Counters: Hashable, Sendable {
        /// Every report given to `report`, a tag's or not.
        public var reports: UInt64 = 0
        public var tagReports = 0
        public var checkins = 0
        public var checkouts = 0
        public var spoofSuspected = 0
        public var commitFailures = 0
    }

    /// Failed commits are retried this often (monotonic); the timer also fires this often,
    /// so the wall clock is looked at at least as often.
    public static let housekeepingInterval: Duration = .seconds(5)
    /// Presence checkpoints besides the saves that come with events (docs/presence.md):
    /// once a minute, more often when `leave_after_s` is under three minutes, so that what
    /// a restart finds of "last heard" is at most a third of `leave_after_s` old after a
    /// crash (two thirds after a power cut), and never less than a second apart.
    public static func checkpointInterval(leaveAfter: Duration) -> Duration {
        min(max(leaveAfter / 3, .seconds(1)), .seconds(60))
    }
    var checkpointInterval: Duration { Self.checkpointInterval(leaveAfter: presence.settings.leaveAfter) }
    /// Every this many checkpoints, one waits for the disk.
    public static let durableCheckpointEvery = 2
    /// Smaller differences are the two clocks' reading jitter and NTP's slewing.
    public static let reportedClockStepMilliseconds: UInt64 = 1000

    public init(setup: DoorSetup, now: Instant, clock: WallClockReading) {
        presence = PresenceEngine(settings: setup.settings, persons: setup.persons,
                                  wallClock: WallClockMapping(anchor: now, wallMilliseconds: clock.wallMilliseconds))
        matcher = TagMatcher(tags: setup.tags, resolutionBudget: RPAResolutionBudget())
        identitiesByTagIndex = setup.tags.map(\.identities)
        gateway = setup.gateway
        appVersion = setup.appVersion
        connectionTags = setup.connectionTags
        wishes = ConnectionWishes(tags: setup.connectionTags.mapValues(\.wish))
        for (index, tag) in setup.connectionTags { tagIndexById[tag.tagId] = index }
        nextHousekeeping = now + Self.housekeepingInterval
        nextCheckpoint = now + Self.checkpointInterval(leaveAfter: setup.settings.leaveAfter)
        if let synchronised = clock.synchronised { _ = clockSync.observe(synchronised: synchronised) }
        configureNeighbours(setup.neighbours, at: now)
    }

    // MARK: Queries

    /// Whether events decided now say their clock was synchronised.
    public var clockSynced: Bool { followsReplayClock || clockSync.isSynchronised }
    /// Events decided but not yet stored (the store refused them; retried).
    public var uncommittedCount: Int { queue.count }
    /// Whether any tag may ever need a connection (the driver starts its connect link).
    public var needsConnections: Bool { !connectionTags.isEmpty }
    public var connectionTagCount: Int { connectionTags.count }
    /// The connection tag at a matcher index.
    public func connectionTag(_ tagIndex: Int) -> DoorConnectionTag? { connectionTags[tagIndex] }
    /// Where a tag was last heard (for a connection).
    public func lastPeer(tagIndex: Int) -> ConnectPeer? { wishes.lastPeer(tagIndex) }
    /// The matcher's counters (IRK work, flood deferrals) and its resolution gate.
    public var matcherCounters: TagMatcher.Counters { matcher.counters }
    public var resolutionGate: Int { matcher.resolutionBudget?.gate ?? 1 }
    /// Resolvable private addresses recently resolved to a person's tag.
    public var recentlyResolvedAddresses: [(address: BluetoothAddress, personId: String)] { matcher.recentlyResolvedAddresses }
    /// Tags decided by the connection wishes so far (work per report, for the tests).
    public var wishTagsVisited: Int { wishes.tagsVisited }

    public mutating func openVisits(at now: Instant) -> [PresenceEngine.OpenVisit] { presence.openVisits(at: now) }

    /// The earliest instant `tick` has something to do (mutating: presence moves timer
    /// entries that samples made early to their real deadline first).
    public var nextDeadline: Instant {
        mutating get {
            var deadline = min(nextHousekeeping, nextCheckpoint)
            if let nextSightingReport { deadline = min(deadline, nextSightingReport) }
            if let checkinReportDue { deadline = min(deadline, checkinReportDue) }
            if let presenceDeadline = presence.nextTransition() { deadline = min(deadline, presenceDeadline) }
            return deadline
        }
    }

    /// Whether a presence transition is due by `now` (mutating as `nextDeadline`).
    public mutating func presenceTransitionDue(at now: Instant) -> Bool {
        presence.nextTransition().map { $0 <= now } ?? false
    }

    // MARK: Reports (the hot path)

    /// The first report of a batch: the clock is followed and deadlines due by the
    /// reports' time fire first (a replay's time runs ahead of the loop's, and order
    /// matters to presence). `now` is when the batch's first report arrived, which may be
    /// before the read that took it; `clockReadAt` is when `clock` was read (the read's
    /// instant; `now` when not given), so a late read is not taken for a clock step.
    public mutating func beginReports(at now: Instant, clock: WallClockReading, clockReadAt: Instant? = nil) -> [DoorAction] {
        inBatch = true
        matcher.refillResolutionBudget(at: now)
        var actions: [DoorAction] = []
        followClock(clock, at: clockReadAt ?? now, into: &actions)
        advancePresence(to: now, into: &actions)
        return actions
    }

    /// One advertising report, read in place (no copy of its data).
    public mutating func report(_ report: LEAdvertisingReportView, at now: Instant) -> [DoorAction] {
        counters.reports &+= 1
        guard let rssi = report.rssi else { return [] }
        let keys = AdvertisementKeys(scanning: report.data)
        // The index only: the tag's configuration is read when its mark is new.
        guard let match = matcher.matchIndex(address: report.address, addressType: report.addressType, keys: keys) else { return [] }
        let tagIndex = Int(match.tagIndex)
        counters.tagReports &+= 1
        let txPower = report.txPower.map(Int.init) ?? keys.txPowerLevel.map(Int.init) ?? keys.iBeacon.map { Int($0.measuredPower) }
        let events = presence.sample(tagIndex: tagIndex, rssi: Int(rssi), address: report.address,
                                     addressType: report.addressType, txPower: txPower, at: now)
        checkpoints.heard(matcher.tags[tagIndex].personId, tagIndex: tagIndex)
        wishes.heard(tagIndex: tagIndex, address: report.address, addressType: report.addressType, at: now)
        guard !events.isEmpty else { return [] }
        var actions: [DoorAction] = []
        handle(events, at: now, into: &actions)
        return actions
    }

    /// The batch's end: the events its reports decided go to the store together (one
    /// transaction, one wait for the disk), then the timer and the connection wishes, once
    /// for all its reports.
    public mutating func endReports(at now: Instant) -> [DoorAction] {
        guard inBatch else { return [] }
        inBatch = false
        var actions: [DoorAction] = []
        commitIfIdle(at: now, into: &actions)
        updateWishes(at: now, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }

    // MARK: Scanning

    /// The controller scans (at start, and again after each recovery). The first start
    /// lets restored visits' timers run once the scan has had `lost_after_s` to hear their
    /// persons (docs/presence.md, "Restart rules").
    public mutating func scanningStarted(at now: Instant) -> [DoorAction] {
        presence.scanningStarted(at: now)
        return [.armTimer(nextDeadline)]
    }

    /// Presence's timers due by `now`, and a line in the log when restored visits stop
    /// being held (what a restart's test, and an installer, watch for).
    mutating func advancePresence(to now: Instant, into actions: inout [DoorAction]) {
        let held = presence.holdsRestoredVisits
        handle(presence.advance(to: now), at: now, into: &actions)
        guard held, !presence.holdsRestoredVisits else { return }
        actions.append(.log(DoorLogLine(.info, "restored visits decided by the scan again",
                                        ["open_visits": "\(presence.openVisits)"])))
    }

    // MARK: Time

    /// The timer: presence deadlines, retries of refused events, the wall clock, checkpoints.
    /// The clock is followed at every tick, not only at housekeeping: a leave timer's
    /// checkout must carry the time (and synchronisation) of now, not of up to 5 s ago.
    public mutating func tick(at now: Instant, clock: WallClockReading) -> [DoorAction] {
        var actions: [DoorAction] = []
        followClock(clock, at: now, into: &actions)
        if now >= nextHousekeeping {
            nextHousekeeping = now + Self.housekeepingInterval
            retry(at: now, into: &actions)
        }
        advancePresence(to: now, into: &actions)
        if now >= nextCheckpoint {
            nextCheckpoint = now + checkpointInterval
            checkpoint(durable: checkpoints.nextIsDurable, into: &actions)
        }
        let periodic = nextSightingReport.map { now >= $0 } ?? false
        if periodic || checkinReportDue.map({ now >= $0 }) ?? false {
            reportSightings(at: now, periodic: periodic, into: &actions)
        }
        updateWishes(at: now, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }

    /// A replay decides on the capture's clock (`ReplayTimeline`): event timestamps are
    /// when it was recorded. Given once, before its first report.
    public mutating func followReplayClock(origin: Instant, originMicroseconds: Int64) {
        guard !followsReplayClock else { return }
        followsReplayClock = true
        // Whole milliseconds: the anchor moves back by the recorded sub-millisecond part.
        var milliseconds = originMicroseconds / 1000
        if originMicroseconds % 1000 < 0 { milliseconds -= 1 }
        let remainder = originMicroseconds - milliseconds * 1000
        presence.wallClock = WallClockMapping(anchor: Instant(nanoseconds: origin.nanoseconds &- remainder &* 1000),
                                              wallMilliseconds: milliseconds)
    }

    /// Event times follow the system's wall clock as it is now, not as it was at start: a
    /// Pi without a real-time clock boots with a stale time until NTP steps it. An open
    /// visit keeps the start its checkin had (the engine fixes it at the checkin), so its
    /// checkout pairs with it. The reading also says whether the clock is synchronised.
    public mutating func observeClock(_ clock: WallClockReading, at now: Instant) -> [DoorAction] {
        var actions: [DoorAction] = []
        followClock(clock, at: now, into: &actions)
        return actions
    }

    mutating func followClock(_ clock: WallClockReading, at now: Instant, into actions: inout [DoorAction]) {
        guard !followsReplayClock else { return }
        let current = WallClockMapping(anchor: now, wallMilliseconds: clock.wallMilliseconds)
        let step = current.wallMilliseconds(at: now) &- presence.wallClock.wallMilliseconds(at: now)
        if step.magnitude >= Self.reportedClockStepMilliseconds {
            actions.append(.log(DoorLogLine(.notice, "wall clock stepped", ["by_ms": "\(step)"])))
        }
        presence.wallClock = current
        guard let synchronised = clock.synchronised else { return }
        switch clockSync.observe(synchronised: synchronised) {
        case .unsynchronised?:
            actions.append(.log(DoorLogLine(.warning, "system clock not synchronised; events carry clockSynced=false until it is")))
        case .synchronised?:
            actions.append(.log(DoorLogLine(.notice, "system clock synchronised")))
        case nil:
            break
        }
    }

    // MARK: Presence events

    mutating func handle(_ events: [PresenceEvent], at now: Instant, into actions: inout [DoorAction]) {
        guard !events.isEmpty else { return }
        for event in events {
            switch event {
            case let .checkin(decision):
                decided(.checkin, decision, record: .current, at: now, into: &actions)
                reportCheckinSoon(at: now)
            case let .checkout(decision):
                // A person the engine no longer knows (removed by a reload): their record goes.
                let record: DoorPendingEvent.RecordWrite = presence.state(of: decision.personId) == nil ? .delete : .current
                decided(.checkout, decision, record: record, at: now, into: &actions)
            case let .stateChanged(personId, from, to, _):
                checkpoints.changed(personId)
                wishes.personChanged(personId)
                actions.append(.log(DoorLogLine(.debug, "presence", ["person_id": personId, "from": "\(from)", "to": "\(to)"])))
            case let .waitingForProof(personId, reason):
                actions.append(.log(DoorLogLine(.info, "not checked in: proof required",
                                                ["person_id": personId, "reason": reason.description])))
            }
        }
        // Within a batch of reports the events wait for its end, where they go to the
        // store together: nothing is done with an event before it is stored either way.
        guard !inBatch else { return }
        commitIfIdle(at: now, into: &actions)
    }

    mutating func decided(_ type: AttendanceEventType, _ decision: PresenceDecision, record: DoorPendingEvent.RecordWrite,
                          identities: [TagIdentity]? = nil, at now: Instant, into actions: inout [DoorAction]) {
        let identities = identities ?? (decision.tagIndex >= 0 && decision.tagIndex < identitiesByTagIndex.count
            ? identitiesByTagIndex[decision.tagIndex] : [])
        var event = AttendanceEvent(type, decision: decision, gateway: gateway, sequence: 0, identities: identities,
                                    appVersion: appVersion)
        event.clockSynced = clockSynced
        enqueue(DoorPendingEvent(event: event, record: record, tagId: decision.tagId,
                                 rssi: decision.rssiSeries.last, reason: nil), at: now, into: &actions)
    }

    // MARK: Mode

    /// The server's switch for the whole door (docs/fleet.md, "Pause"): while paused
    /// nobody new is checked in; presence goes on and open visits end with their checkout.
    /// A person who arrived during the pause and is still at the door is checked in at
    /// their first sample after the resume, their arrival then being that moment.
    public mutating func setMode(_ newMode: DoorMode, at now: Instant) -> [DoorAction] {
        guard newMode != mode else { return [] }
        mode = newMode
        applyHold()
        let message = newMode == .paused ? "check-ins paused by the server" : "check-ins resumed by the server"
        return [.log(DoorLogLine(.notice, message, ["mode": newMode.rawValue]))]
    }

    /// Check-ins are held while paused, or while the queue of refused events is full.
    mutating func applyHold() {
        presence.checkinsHeld = mode == .paused || queue.isFull
    }
}
