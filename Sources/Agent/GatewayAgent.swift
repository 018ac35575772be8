#if canImport(Glibc)
import Glibc
#endif
import Config
import EventLoop
import GatewayCore
import HCI
import HCITransport
import Host
import Journal
import Forwarder
import LEDs
import Store

/// The door agent (`beacon-gateway run`): transport → host → tag matching → presence →
/// events committed to the store → forwarder, with the LEDs, the journal and systemd
/// told along the way.
///
/// Everything runs on one event loop; each layer below is sans-IO or loop-driven, so
/// this class only wires inputs to outputs and owns the order of side effects: an event
/// is committed (with the presence state that caused it, in one transaction) before
/// anything else is done with it.
public final class GatewayAgent {
    public struct Options {
        public var configurationPath: String
        public var configuration: GatewayConfiguration
        public var appVersion: String
        public var capturePath: String?

        public init(configurationPath: String, configuration: GatewayConfiguration, appVersion: String, capturePath: String? = nil) {
            self.configurationPath = configurationPath
            self.configuration = configuration
            self.appVersion = appVersion
            self.capturePath = capturePath
        }
    }

    public enum Outcome: Equatable {
        case stopped
        case failed(String)
    }

    let options: Options
    var configuration: GatewayConfiguration
    let loop: EventLoop
    let systemClock = SystemClock()
    /// Stands in for `systemClock`'s wall clock in `followSystemClock` (a test steps it).
    var readWallClock: (() -> Int64)?
    /// Whether the system clock is synchronised (a test substitutes it); see GatewayAgent+ClockSync.
    var clockSync: any ClockSyncSource = KernelClockSync()
    var clockSyncState = ClockSyncState()
    var log: LogSink
    var store: Store?
    var link: ControllerLink?
    var matcher: TagMatcher
    var presence: PresenceEngine
    /// Per matcher tag index: the tag's configured identities (the event's beacon block).
    var identitiesByTagIndex: [[TagIdentity]]
    var gatewayIdentity: GatewayIdentity
    /// Persons whose state changed without an event since their record was saved: their
    /// record goes out at the next checkpoint.
    var changedPersons: Set<String> = []
    /// Persons heard since their record was saved: their last sample goes out in the
    /// checkpoint's `LastHeardDigest` (one row for all of them, not one per person).
    var heardPersons: Set<String> = []
    /// Something was heard since the last checkpoint (else the digest is unchanged).
    var heardSinceCheckpoint = false
    /// Whether a digest row may be stored (it goes once every record is fresher).
    var digestStored = true
    /// Relaxed checkpoints since the last durable one.
    var relaxedCheckpoints = 0
    /// Inside a batch of reports (between its first report and `finishIngest`).
    var ingesting = false
    /// Decisions whose commit failed (disk full, I/O error): retried, never dropped.
    var uncommitted: [PresenceEvent] = []
    /// Whether events can be stored, and when to try the disk again (GatewayAgent+StoreHealth).
    var storeHealth = StoreHealth()
    lazy var storeRetryTimer = DeadlineTimer(loop: loop) { [unowned self] in self.retryStore() }
    lazy var presenceTimer = DeadlineTimer(loop: loop) { [unowned self] in self.presenceTimerFired() }
    var fatal: String?
    var stopping = false
    var counters = Counters()
    var forwarder: Forwarder?
    var leds: LEDDriver?
    var ledLines: GPIOLines?
    let notifier = SystemdNotifier.fromEnvironment()
    var watchdog: WatchdogGate? = SystemdNotifier.watchdogInterval().map { WatchdogGate(interval: $0) }
    /// READY=1 goes out once, when scanning first starts.
    var announcedReady = false
    /// Event timestamps follow a replay's recorded clock (set at its first report).
    var followsReplayClock = false
    /// Connections and proofs (see docs/proof-protocol.md, docs/persistent-connect.md); nil
    /// when no tag ever needs a connection.
    var proofs: ProofSupport?
    /// Counters and endpoints for the heartbeat, metrics and `status` (GatewayAgent+Fleet).
    lazy var fleet = FleetObserver(now: loop.now, wallMilliseconds: systemClock.wallMilliseconds)

    struct Counters {
        var checkins = 0
        var checkouts = 0
        var commitFailures = 0
    }

    /// Failed commits are retried, and the wall clock looked at, this often.
    static let retryInterval: Duration = .seconds(5)
    /// How often presence is checkpointed besides the saves that come with events. A
    /// checkpoint only refreshes "last heard" and states that changed without an event,
    /// so it is written without waiting for the disk (no fsync; an SD card's writes
    /// are what count), except every `durableCheckpointEvery`-th. A `kill -9` loses
    /// at most one interval of "last heard"; a power cut at most the durable period
    /// (every event commit also makes the checkpoints before it durable). Never an
    /// event, nor a visit's start or end: those are saved with their event.
    static let checkpointInterval: Duration = .seconds(60)
    static let durableCheckpointEvery = 2
    static let statusInterval: Duration = .seconds(5)
    static let readCoalescing: Duration = .milliseconds(40)

    public init(options: Options, loop: EventLoop = EventLoop()) {
        self.options = options
        configuration = options.configuration
        self.loop = loop
        log = LogSink.automatic(minimumLevel: Severity(configuration.gateway.logLevel))
        let setup = GatewayAgent.presenceSetup(configuration)
        matcher = TagMatcher(tags: setup.tags)
        identitiesByTagIndex = setup.tags.map(\.identities)
        gatewayIdentity = GatewayIdentity(id: configuration.gateway.id, site: configuration.gateway.site, door: configuration.gateway.door)
        presence = PresenceEngine(
            settings: setup.settings, persons: setup.persons,
            wallClock: WallClockMapping(anchor: loop.now, wallMilliseconds: systemClock.wallMilliseconds)
        )
    }

    // MARK: Life cycle

    public func run() -> Outcome {
        log.log(.notice, "starting", [
            "version": options.appVersion, "gateway": configuration.gateway.id,
            "persons": "\(configuration.persons.count)", "transport": configuration.bluetooth.transport.description,
        ])
        // Without a usable store the door still scans and decides; the store is tried
        // again on a backoff (GatewayAgent+StoreHealth).
        openStoreOrRetry()
        startRoster()
        restorePresence()
        startLEDs()
        startForwarder()
        startFleet()

        let spec = configuration.bluetooth.transport
        let transport: any HCITransport
        do {
            transport = try makeTransport(spec, capturePath: options.capturePath)
        } catch {
            return .failed(error.message)
        }
        let isReplay: Bool = if case .btsnoop = spec { true } else { false }
        let link = ControllerLink(
            loop: loop, transport: transport,
            configuration: HostConfiguration(scan: GatewayAgent.scanSettings(configuration)),
            isPermanent: { error in GatewayAgent.isPermanent(error, replay: isReplay) }
        )
        // 40 ms more per report are nothing to presence (decisions take seconds); a
        // conversation (commands, a proof) is read at once (see `TransportDriver`); and a
        // busy door then wakes the agent 25 times a second instead of once per report:
        // each wake-up costs more than a hundred reports (README, "Benchmarks").
        link.readCoalescing = Self.readCoalescing
        self.link = link
        link.onAdvertisingReport = { [unowned self] report, now in self.ingest(report, at: now) }
        link.onAdvertisingReportsEnd = { [unowned self] now in self.finishIngest(at: now) }
        link.onLog = { [unowned self] event in self.log.log(event) }
        link.onFatalError = { [unowned self] error in
            self.fatal = error.message
            self.loop.stop()
        }
        link.onExhausted = { [unowned self] in
            // A replay has ended, at its last recorded report: visits still open then
            // stay open (the closing line counts them), as they would at a live door.
            self.log.log(.info, "replay finished")
            self.loop.stop()
        }

        do {
            try loop.onSignal(.terminate) { [unowned self] in self.shutdown(signal: "SIGTERM") }
            try loop.onSignal(.interrupt) { [unowned self] in self.shutdown(signal: "SIGINT") }
            try loop.onSignal(.hangup) { [unowned self] in self.reload() }
        } catch {
            return .failed("cannot handle signals: \(error)")
        }
        // Listeners are told in the order they registered: on a state change the door
        // beacon, the data path and the connect scheduler act before the agent does.
        DoorBeaconAdvertiser.attach(to: link, advertise: configuration.advertise, log: log)
        startProofs(link)
        link.stateChangeListeners.add { [unowned self] state in self.controllerStateChanged(state) }
        schedulePeriodicWork()
        scheduleCheckpoint()
        scheduleStatus()
        link.start()
        do {
            try loop.run()
        } catch {
            fatal = fatal ?? "event loop failed: \(error)"
        }
        finish()
        if let fatal { return .failed(fatal) }
        return .stopped
    }

    func shutdown(signal: String) {
        guard !stopping else { return }
        stopping = true
        notify(.stopping)
        log.log(.notice, "stopping", ["signal": signal])
        loop.stop()
    }

    /// Saves what must survive and gives the controller back.
    func finish() {
        link?.stop()
        forwarder?.stop()
        stopFleet()
        stopLEDs()
        retryUncommitted()
        reportHeldAtStop()
        saveAllPresence()
        // Last, so saving overlapped with the close of the transport that stop() started.
        link?.waitForHandBack(log: log)
        log.log(.notice, "stopped", [
            "checkins": "\(counters.checkins)", "checkouts": "\(counters.checkouts)",
            "open_visits": "\(presence.openVisits)",
        ])
        loop.stopHandlingSignals()
        store = nil
    }

    // MARK: Store

    func openStore() throws(AgentError) {
        let directory = configuration.gateway.stateDirectory
        if mkdir(directory, 0o750) != 0 && errno != EEXIST {
            throw .stateDirectory(directory, errno: errno)
        }
        let path = Store.path(stateDirectory: directory)
        do {
            let opened = try Store.openRecovering(path: path, configuration: Self.storeConfiguration, suffix: corruptDatabaseSuffix())
            if let moved = opened.movedAside { announceMovedAside(moved) }
            store = opened.store
        } catch {
            throw .store(path, error)
        }
    }

    func restorePresence() {
        guard let store else { return }
        var stored: [String: [UInt8]]
        do {
            stored = try store.loadPresence()
        } catch {
            log.log(.error, "cannot read persisted presence, starting with everyone outside", ["error": error.description])
            return
        }
        var digest = LastHeardDigest()
        if let bytes = stored.removeValue(forKey: LastHeardDigest.storageKey) {
            if let decoded = LastHeardDigest(decoding: bytes) {
                digest = decoded
            } else {
                log.log(.warning, "unreadable last-heard checkpoint ignored")
            }
        }
        var records: [PersistedPresence] = []
        for (personId, bytes) in stored {
            if let record = PersistedPresence(decoding: bytes) {
                records.append(digest.applied(to: record))
            } else {
                log.log(.warning, "unreadable persisted presence ignored", ["person_id": personId])
            }
        }
        // `restore` returns the records it ignored (persons no longer configured, records
        // that make no sense); the others are restored, with PRESENT become UNCONFIRMED.
        // The wall time of "now" goes through the engine's own mapping, so a restored visit
        // start maps back to the very milliseconds it was stored with (the checkout's key).
        let now = loop.now
        let ignored = presence.restore(records: records, now: now, wallNow: presence.wallClock.wallMilliseconds(at: now))
        let ignoredPersons = Set(ignored.map(\.personId))
        for record in ignored where record.state != .outside {
            log.log(.warning, "persisted presence ignored", ["person_id": record.personId, "state": "\(record.state)"])
        }
        for record in records where !ignoredPersons.contains(record.personId) {
            guard let state = presence.state(of: record.personId), state != .outside else { continue }
            log.log(.info, "presence restored", ["person_id": record.personId, "state": "\(state)"])
        }
        checkOutRemovedPersons(ignored)
        // Every record again, with the digest's last samples in it (the digest then goes).
        changedPersons.formUnion(stored.keys)
        checkpointPresence(durable: true)
        armPresenceTimer()
    }

    // MARK: Ingest (the hot path)

    /// One report, read in place from its packet (no report value, no copy of its data).
    /// The first report of a batch fires the deadlines due by its time; the batch's end
    /// (`finishIngest`) re-arms the timer and the connect wishes once for all of them.
    func ingest(_ report: LEAdvertisingReportView, at now: Instant) {
        if !ingesting {
            ingesting = true
            followReplayClock()
            followSystemClock()
            // Deadlines due by these reports' time first: the loop's timer fires them too,
            // but a replay's time runs ahead of the loop's, and order matters to presence.
            let due = presence.advance(to: now)
            if !due.isEmpty { handle(due, at: now) }
        }
        fleet.counters.reports &+= 1
        guard let rssi = report.rssi else { return }
        let keys = AdvertisementKeys(scanning: report.data)
        guard let match = matcher.match(address: report.address, addressType: report.addressType, keys: keys) else { return }
        fleet.counters.tagReports &+= 1
        let txPower = report.txPower.map(Int.init) ?? keys.txPowerLevel.map(Int.init) ?? keys.iBeacon.map { Int($0.measuredPower) }
        let events = presence.sample(
            tagIndex: match.tagIndex, rssi: Int(rssi), address: report.address, addressType: report.addressType,
            txPower: txPower, at: now
        )
        heardPersons.insert(match.personId)
        heardSinceCheckpoint = true
        heardForConnection(tagIndex: match.tagIndex, address: report.address, addressType: report.addressType)
        if !events.isEmpty { handle(events, at: now) }
    }

    func finishIngest(at now: Instant) {
        guard ingesting else { return }
        ingesting = false
        armPresenceTimer()
        updateWantedConnections(at: now)
    }

    /// Event times follow the system's wall clock as it is now, not as it was at start: a
    /// Pi without a real-time clock boots with a stale time (fake-hwclock's last save)
    /// until NTP steps it, and a mapping fixed at start would keep every later event off
    /// by that step until the next restart. An open visit keeps the start its checkin
    /// had (the engine fixes it at the checkin), so its checkout pairs with it.
    func followSystemClock() {
        guard !followsReplayClock, link?.replayTimeline == nil else { return }
        let now = loop.now
        let current = WallClockMapping(anchor: now, wallMilliseconds: readWallClock?() ?? systemClock.wallMilliseconds)
        let step = current.wallMilliseconds(at: now) &- presence.wallClock.wallMilliseconds(at: now)
        if step.magnitude >= Self.reportedClockStepMilliseconds {
            log.log(.notice, "wall clock stepped", ["by_ms": "\(step)"])
        }
        presence.wallClock = current
    }

    /// Smaller differences are the two clocks' reading jitter and NTP's slewing.
    static let reportedClockStepMilliseconds: UInt64 = 1000

    /// A replay decides on the capture's clock: event timestamps are when the capture
    /// was recorded (once, at its first report; see `ReplayTimeline`).
    func followReplayClock() {
        guard !followsReplayClock, let timeline = link?.replayTimeline else { return }
        followsReplayClock = true
        // Whole milliseconds: the anchor moves back by the recorded sub-millisecond part.
        let microseconds = timeline.originMicroseconds
        var milliseconds = microseconds / 1000
        if microseconds % 1000 < 0 { milliseconds -= 1 }
        let remainder = microseconds - milliseconds * 1000
        presence.wallClock = WallClockMapping(
            anchor: Instant(nanoseconds: timeline.origin.nanoseconds &- remainder &* 1000), wallMilliseconds: milliseconds
        )
    }

    // MARK: Presence events

    func handle(_ events: [PresenceEvent], at now: Instant) {
        for event in events {
            switch event {
            case .checkin, .checkout:
                commit(event, at: now)
            case let .stateChanged(personId, from, to, _):
                changedPersons.insert(personId)
                proofs?.wishes.personChanged(personId)
                log.log(.debug, "presence", ["person_id": personId, "from": "\(from)", "to": "\(to)"])
            case let .waitingForProof(personId, reason):
                log.log(.info, "not checked in: proof required", ["person_id": personId, "reason": reason.description])
            }
        }
    }

    /// Commits the event and the person's presence record in one transaction; only then
    /// is anything else done with it (log, LEDs, forwarder).
    func commit(_ event: PresenceEvent, at now: Instant) {
        guard let decision = event.decision else { return }
        // Behind decisions still held (the store failed, or is not open): the order
        // decided is the order stored. The retry commits them from the front.
        guard let store, uncommitted.isEmpty else { return uncommitted.append(event) }
        let identities = decision.tagIndex < identitiesByTagIndex.count ? identitiesByTagIndex[decision.tagIndex] : []
        let gateway = gatewayIdentity
        let appVersion = options.appVersion
        let record = presence.record(for: decision.personId)
        var committed: AttendanceEvent?
        do {
            try store.commit { transaction throws(StoreError) in
                let type = event.attendanceType
                let probe = AttendanceEvent(type, decision: decision, gateway: gateway, sequence: 0, identities: identities, appVersion: appVersion)
                _ = try transaction.appendEvent(
                    idempotencyKey: probe.idempotencyKey, type: type.rawValue, personId: decision.personId,
                    createdAtMillis: decision.decidedAtWallMilliseconds
                ) { sequence in
                    var event = probe
                    event.sequence = sequence
                    event.clockSynced = clockSynchronisedNow()
                    committed = event
                    return Array(event.jsonBody().utf8)
                }
                if let record {
                    try transaction.savePresence(personId: decision.personId, record: record.encode())
                }
            }
        } catch {
            counters.commitFailures += 1
            // Disk trouble is logged once per change by storeFailed, not per event.
            log.log(error.trouble == nil ? .error : .debug, "cannot store event, will retry", ["person_id": decision.personId, "error": error.description])
            uncommitted.append(event)
            storeFailed(error)
            return
        }
        storeSucceeded()
        // The record went with the event: last sample included.
        changedPersons.remove(decision.personId)
        heardPersons.remove(decision.personId)
        guard let committed else {
            // The key was stored before (a decision replayed after a crash): nothing new.
            log.log(.info, "event already stored", ["person_id": decision.personId, "type": event.attendanceType.rawValue])
            return
        }
        if committed.type == .checkin { counters.checkins += 1 } else { counters.checkouts += 1 }
        log.log(.notice, committed.type.rawValue, [
            "event": committed.type.rawValue, "person_id": committed.userId, "tag": decision.tagId, "sequence": "\(committed.sequence)",
            "rssi": decision.rssiSeries.last.map { "\($0)" } ?? "-",
            "visit_start": ISO8601Timestamp.format(millisecondsSinceEpoch: committed.visitStartMilliseconds),
        ])
        eventCommitted(committed)
    }


    func retryUncommitted() {
        guard !uncommitted.isEmpty, store != nil else { return }
        let pending = uncommitted
        uncommitted = []
        for (index, event) in pending.enumerated() {
            commit(event, at: loop.now)
            // The store failed again: the rest wait, in order, for the next try (each
            // attempt may wait out the busy timeout; the loop must not).
            if !uncommitted.isEmpty {
                uncommitted.append(contentsOf: pending[(index + 1)...])
                return
            }
        }
    }

    /// Saves what changed since the last checkpoint: the records of persons whose state
    /// changed without an event, and one `LastHeardDigest` for those only heard. The cost
    /// follows what changed (a page or two at a quiet door), not the roster.
    func checkpointPresence(durable: Bool) {
        guard let store else { return }
        guard !changedPersons.isEmpty || heardSinceCheckpoint || (digestStored && heardPersons.isEmpty) else { return }
        let changed = changedPersons
        var digest = LastHeardDigest()
        for personId in heardPersons where !changed.contains(personId) {
            if let wall = presence.lastHeardWallMilliseconds(of: personId) { digest.lastHeard[personId] = wall }
        }
        let write: (inout StoreTransaction) throws(StoreError) -> Void = { [presence, digestStored] transaction throws(StoreError) in
            for personId in changed {
                if let record = presence.record(for: personId) {
                    try transaction.savePresence(personId: personId, record: record.encode())
                } else {
                    try transaction.deletePresence(personId: personId)
                }
            }
            if !digest.lastHeard.isEmpty {
                try transaction.savePresence(personId: LastHeardDigest.storageKey, record: digest.encode())
            } else if digestStored {
                try transaction.deletePresence(personId: LastHeardDigest.storageKey)
            }
        }
        do {
            if durable {
                try store.commit(write)
            } else {
                try store.commitRelaxed(write)
            }
        } catch {
            log.log(error.trouble == nil ? .error : .debug, "cannot save presence state", ["error": error.description])
            storeFailed(error)
            return
        }
        storeSucceeded()
        changedPersons.removeAll(keepingCapacity: true)
        heardPersons.subtract(changed)
        heardSinceCheckpoint = false
        digestStored = !digest.lastHeard.isEmpty
        relaxedCheckpoints = durable ? 0 : relaxedCheckpoints + 1
    }

    /// At shutdown: every person's record, durably; the digest is then not needed.
    func saveAllPresence() {
        changedPersons.formUnion(configuration.persons.map(\.id))
        changedPersons.formUnion(heardPersons)
        heardPersons.removeAll()
        checkpointPresence(durable: true)
    }

    // MARK: Timers

    func armPresenceTimer() {
        presenceTimer.arm(at: presence.nextDeadline)
    }

    private func presenceTimerFired() {
        followSystemClock()
        let now = loop.now
        let events = presence.advance(to: now)
        if !events.isEmpty { handle(events, at: now) }
        armPresenceTimer()
        updateWantedConnections(at: now)
    }

    func schedulePeriodicWork() {
        _ = loop.schedule(after: Self.retryInterval) { [unowned self] in
            self.followSystemClock()
            self.retryUncommitted()
            self.schedulePeriodicWork()
        }
    }

    func scheduleCheckpoint() {
        _ = loop.schedule(after: Self.checkpointInterval) { [unowned self] in
            self.checkpointPresence(durable: self.relaxedCheckpoints + 1 >= Self.durableCheckpointEvery)
            self.scheduleCheckpoint()
        }
    }

    // MARK: Controller

    func controllerStateChanged(_ state: HostState) {
        switch state {
        case .scanning(let info):
            controllerUp()
            log.log(.notice, "controller up", [
                "address": info.address.description, "commands": info.commandFamily.description,
                "accept_list": "\(info.filterAcceptListSize)",
            ])
        case .recovering(let reason, let attempt):
            controllerDown()
            log.log(attempt == 1 ? .warning : .info, "controller down", ["reason": reason.description, "attempt": "\(attempt)"])
        case .starting, .initializing:
            break
        }
    }

    // MARK: Reload (SIGHUP)

    func reload() {
        // RELOADING=1 … READY=1 only once started: READY=1 means "scanning" (see docs/logs-and-systemd.md), and
        // before that the first READY=1 still comes from the controller coming up.
        let announce = announcedReady
        if announce { notify(.reloading(at: loop.now)) }
        log.log(.notice, "reloading configuration", ["path": options.configurationPath])
        defer { if announce { notify(.ready) } }
        let fresh: GatewayConfiguration
        do {
            fresh = try GatewayConfiguration.load(path: options.configurationPath)
        } catch {
            log.log(.error, "configuration not reloaded: keeping the running one", ["problems": "\(error.issues.count)"])
            for issue in error.issues { log.log(.error, "\(issue)") }
            return
        }
        apply(mergingServerRoster(fresh))
    }

    /// Puts a validated configuration in force: the one path for SIGHUP and for a new
    /// roster from the server (persons whose id remains keep their presence; removed
    /// persons who were present are checked out).
    func apply(_ fresh: GatewayConfiguration) {
        let now = loop.now
        let setup = GatewayAgent.presenceSetup(fresh)
        matcher = TagMatcher(tags: setup.tags)
        identitiesByTagIndex = setup.tags.map(\.identities)
        let events = presence.reconfigure(settings: setup.settings, persons: setup.persons, at: now)
        configuration = fresh
        log.minimumLevel = Severity(fresh.gateway.logLevel)
        gatewayIdentity = GatewayIdentity(id: fresh.gateway.id, site: fresh.gateway.site, door: fresh.gateway.door)
        if !events.isEmpty { handle(events, at: now) }
        armPresenceTimer()
        reloadProofs()
        reloadForwarder(fresh)
        reloadFleet(fresh)
        log.log(.notice, "configuration reloaded", ["persons": "\(fresh.persons.count)", "open_visits": "\(presence.openVisits)"])
    }
}

extension PresenceEvent {
    var decision: PresenceDecision? {
        switch self {
        case let .checkin(decision), let .checkout(decision): decision
        case .stateChanged, .waitingForProof: nil
        }
    }

    var attendanceType: AttendanceEventType {
        if case .checkin = self { return .checkin }
        return .checkout
    }
}
