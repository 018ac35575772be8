#if canImport(Glibc)
import Glibc
#endif
import Config
import Enrolment
import EventLoop
import GatewayCore
import HCI
import HCITransport
import Host
import HostDrivers
import Journal
import Forwarder
import LEDs
import SiteBus
import Store

/// The door agent (`beacon-gateway run`) as a composition root (docs/architecture.md,
/// "The agent: drivers and fan-out"): it builds one driver per subsystem (the controller
/// and connections in HostDrivers; the store, delivery, the roster, the fleet's endpoints
/// and the indicators in `Drivers/`), starts, reloads and stops them through one list
/// (`drivers`), performs the door core's actions by handing each to the driver that owns
/// it, and passes on what happened in the order `GatewayAgent+FanOut` writes.
///
/// Everything runs on one event loop; every decision is a sans-IO machine's. The one
/// order this class keeps itself: an event is committed (with the presence state that
/// caused it, in one transaction) before anything else is done with it.
public final class GatewayAgent {
    public struct Options {
        public var configurationPath: String
        public var configuration: GatewayConfiguration
        public var appVersion: String
        public var capturePath: String?
        /// `--capture-keys`: the capture keeps pairing keys and LTKs (zeroed otherwise).
        public var captureKeys = false
        /// The controller's transport, made by the caller instead of from the configured
        /// spec: a test's controller in memory, so the whole agent runs on a virtual loop.
        public var transport: (any HCITransport)?

        public init(configurationPath: String, configuration: GatewayConfiguration, appVersion: String, capturePath: String? = nil,
                    transport: (any HCITransport)? = nil) {
            self.configurationPath = configurationPath
            self.configuration = configuration
            self.appVersion = appVersion
            self.capturePath = capturePath
            self.transport = transport
        }
    }

    public enum Outcome: Equatable {
        case stopped
        case failed(String)
    }

    let options: Options
    var configuration: GatewayConfiguration
    let loop: EventLoop
    /// Whether the system clock is synchronised (a test substitutes it); see GatewayAgent+ClockSync.
    var clockSync: any ClockSyncSource = KernelClockSync()
    var log: LogSink
    /// The controller's link, once opened.
    var controller: ControllerLinkDriver?
    var link: ControllerDriver? { controller?.link }
    /// Every decision: matching, presence, connections and proofs, what is committed and
    /// saved when (sans-IO; this class performs what it returns, in order).
    // Single-threaded and never accessed overlapping (an action is performed after the
    // call that returned it): no runtime exclusivity check per report.
    @exclusivity(unchecked) var core: DoorCore
    /// The stored presence was read (at start, or when a store that could not be opened
    /// at start first opens).
    var presenceRestored = false
    lazy var coreTimer = DeadlineTimer(loop: loop) { [unowned self] in self.coreTimerFired() }
    /// The outbox and persisted presence, their health, the events held over a restart
    /// and retention.
    lazy var storage: StoreDriver = StoreDriver(
        loop: loop, log: log, stateDirectory: configuration.gateway.stateDirectory,
        hooks: StoreDriver.Hooks(
            troubleChanged: { [unowned self] inTrouble in
                self.fleet.counters.diskTrouble = inTrouble ? 1 : 0
                self.indicators.storeTrouble(inTrouble)
            },
            recovered: { [unowned self] recovery in self.fleet.counters.corruption.count(recovery) },
            uncommittedCount: { [unowned self] in self.core.uncommittedCount },
            retryCommits: { [unowned self] in self.perform(self.core.retryCommits(at: self.loop.now)) },
            // Delivery reads the store: stopped while it is closed and opened again.
            closing: { [unowned self] in self.delivery.stop() },
            reopened: { [unowned self] store in self.storeReopened(store) },
            heldEventsStored: { [unowned self] in self.delivery.kick() },
            hasSinks: { [unowned self] in !self.delivery.configuredSinks(self.configuration).isEmpty },
            stopping: { [unowned self] in self.saveWhatMustSurvive() }
        )
    )
    /// The store while one is open.
    var store: Store? { storage.store }
    var fatal: String?
    var stopping = false
    /// Delivery of the outbox to its sinks (docs/event-api.md, "Sinks"): one wiring a sink,
    /// in the order they start. A new sink is its own target and one line here.
    lazy var delivery: DeliveryDriver = DeliveryDriver(
        loop: loop, log: log, store: { [unowned self] in self.store },
        sinks: [
            ServerSinkWiring(appVersion: options.appVersion, onEvent: { [unowned self] event in self.forwarderEvent(event) },
                             onDelivered: { [unowned self] created, delivered in
                                 self.fleet.delivered(createdAtMillis: created, deliveredAtMillis: delivered)
                             }),
            BusSinkWiring(siteBus: { [unowned self] in self.siteBus }, storeFailed: { [unowned self] error in self.sinkStoreFailed(error) }),
        ]
    )
    /// The site's MQTT bus (`[mqtt]`): status, presence, Home Assistant discovery, events.
    lazy var siteBus: SiteBusDriver = SiteBusDriver(
        loop: loop, log: log, appVersion: options.appVersion,
        hooks: SiteBusDriver.Hooks(
            persons: { [unowned self] in self.configuration.persons },
            openVisits: { [unowned self] in self.openVisitsByPerson() },
            counters: { [unowned self] counters in
                self.fleet.siteBus = counters
                self.core.siteBus(up: counters?.isUp ?? false)
            },
            sighting: { [unowned self] payload in self.neighbourSighting(payload) }
        )
    )
    /// What the server's sink did: counted, and a damaged file found by its reads is the
    /// door's disk trouble too: one policy (examined, rebuilt or moved aside with a salvage).
    func forwarderEvent(_ event: ForwarderEvent) {
        fleet.forwarderEvent(event)
        if case let .storeFailed(error) = event { sinkStoreFailed(error) }
    }

    /// A sink's read or record failed: a damaged file is the door's disk trouble (the
    /// events stay pending for that sink either way).
    func sinkStoreFailed(_ error: StoreError) {
        if error.trouble == .corrupt { storage.failed(error) }
    }
    /// The LEDs, systemd's notifications and the watchdog.
    lazy var indicators: IndicatorsDriver = IndicatorsDriver(
        loop: loop, log: log, notifier: SystemdNotifier.fromEnvironment(), watchdogInterval: SystemdNotifier.watchdogInterval(),
        facts: { [unowned self] in self.statusFacts() }
    )
    /// Connection and proof drivers (see docs/proof-protocol.md, docs/persistent-connect.md);
    /// nil when no tag ever needs a connection.
    var connections: ConnectionsDriver?
    var proofs: ProofDrivers? { connections?.proofs }
    /// The door beacon (`[advertise]`), paused while an enrolment window advertises.
    var doorBeacon: DoorBeaconAdvertiser?
    /// Enrolment windows asked for on the status socket (GatewayAgent+Enrolment); built at
    /// the first request.
    var enrolment: EnrolmentDriver?
    /// `[security] enroll_group` as last looked up in /etc/group: the name and its gid.
    var enrollGroupLookup: (name: String, gid: UInt32?)?
    /// Counters for the heartbeat, metrics and `status`.
    lazy var fleet = FleetObserver(now: loop.now, wallMilliseconds: loop.wallMilliseconds)
    /// The roster from the server; nil without `[server] roster = true`.
    var roster: RosterDriver?
    /// The heartbeat, `/metrics`, the textfile and the status socket.
    lazy var fleetEndpoints: FleetDriver = FleetDriver(
        loop: loop, log: log, counters: fleet, appVersion: options.appVersion,
        sources: FleetDriver.Sources(
            snapshot: { [unowned self] in self.fleetSnapshot() },
            statusReport: { [unowned self] in self.statusReport() },
            beforeHeartbeat: { [unowned self] in self.delivery.kick() },
            takeOver: { [unowned self] head, peer in self.enrolmentTakeOver(head, peer: peer) },
            admits: { [unowned self] peer in self.statusSocketAccess().allows(peer, .status) }
        )
    )

    /// The presence engine inside the core (read-only here: decisions are the core's).
    var presence: PresenceEngine { core.presence }

    // MARK: The drivers

    /// Every driver the door has now, in start order: the one list the start, a reload,
    /// the log level and the stop go through (docs/architecture.md, "One lifecycle for
    /// every driver"). A new driver is one type conforming to `AgentDriver` and one line
    /// here, where it starts: after what it uses, since the stop goes in reverse.
    var drivers: [any AgentDriver] {
        let all: [(any AgentDriver)?] = [
            storage,        // first started, last stopped: writes what must survive the stop
            roster,         // the server's persons, joined to the file's before presence is restored
            indicators,
            delivery,       // reads the store
            siteBus,        // reads the store; publishes what presence decided
            fleetEndpoints, // kicks delivery before a heartbeat
            controller,     // started once everything that hears it is built
            doorBeacon,     // advertises on the controller
            connections,    // connects on the controller
            enrolment,      // pauses the beacon and connections, submits on the controller
        ]
        return all.compactMap { $0 }
    }

    /// Where each driver is in its lifecycle.
    let lifecycle = DriverLifecycle()

    /// Starts the listed drivers not started yet (at `run`, or one just built while the
    /// door runs), with the configuration in force, or `configuration` for a driver that
    /// needs another (the roster: the file as read).
    func startDrivers(_ configuration: GatewayConfiguration? = nil) {
        lifecycle.start(drivers, configuration ?? self.configuration)
    }

    public init(options: Options, loop: EventLoop = EventLoop()) {
        self.options = options
        configuration = options.configuration
        self.loop = loop
        log = LogSink.automatic(minimumLevel: Severity(configuration.gateway.logLevel))
        core = DoorCore(setup: GatewayAgent.doorSetup(configuration, appVersion: options.appVersion), now: loop.now,
                        clock: WallClockReading(wallMilliseconds: loop.wallMilliseconds, synchronised: true))
    }

    // MARK: Life cycle

    public func run() -> Outcome {
        // Before any client of the site bus, while the loop is the only thread.
        MosquittoLibrary.prepare()
        log.log(.notice, "starting", [
            "version": options.appVersion, "gateway": configuration.gateway.id,
            "persons": "\(configuration.persons.count)", "transport": configuration.bluetooth.transport.description,
        ])
        // Whether the clock is synchronised before anything is decided (the core assumes
        // it is until told; a Pi without a real-time clock boots unsynchronised).
        perform(core.observeClock(readClock(), at: loop.now))
        // The drivers start in the list's order, with the door's own steps between them.
        // The store first (without a usable one the door still scans and decides; it is
        // tried again on a backoff) and the roster, the list up to the indicators: presence
        // is restored from the one, for the persons the other adds, before any driver that
        // hears of an event starts.
        roster = makeRoster(file: configuration)
        lifecycle.start(Array(drivers.prefix { $0 !== indicators }), configuration)
        mergeRosterFromDisk()
        restorePresence()
        startDrivers()

        let spec = configuration.bluetooth.transport
        let isReplay = self.isReplay
        let link: ControllerDriver
        let isPermanent = { (error: TransportError) in GatewayAgent.isPermanent(error, replay: isReplay) }
        // What enrolment pairs from on a controller without a usable public address.
        let staticRandomAddress = EnrolmentAddress.staticRandom(site: configuration.gateway.site ?? "", gatewayId: configuration.gateway.id)
        if let transport = options.transport {
            link = ControllerSession(loop: loop, spec: spec, transport: transport, scan: configuration.bluetooth.scanSettings(),
                                     staticRandomAddress: staticRandomAddress, isPermanent: isPermanent).link
        } else {
            do {
                link = try ControllerSession(loop: loop, spec: spec, capturePath: options.capturePath, captureKeys: options.captureKeys,
                                             scan: configuration.bluetooth.scanSettings(), staticRandomAddress: staticRandomAddress,
                                             isPermanent: isPermanent).link
            } catch {
                // The drivers started above stop, and what must survive is kept, as at any stop.
                finish()
                return .failed(error.message)
            }
        }
        controller = ControllerLinkDriver(link: link, log: log)
        // Reports gather between reads (`ReadGathering`: the busier the door, the shorter
        // the pause; shorter on a serial line, whose kernel buffer is small): little to
        // presence, whose decisions take seconds; commands and a proof's exchange are read
        // at once (see `TransportDriver`); and a busy door wakes the agent once per batch
        // of reports instead of once per report, each wake-up costing far more than a
        // report (docs/benchmarks.md, "Why the live path is cheap").
        link.readGathering = ReadGathering.forTransport(spec)
        // Unretained, and used without a retain per call: an atomic retain and release per
        // report cost more than much of the ingest. The agent outlives every read: it owns
        // the link and stops it before `run()` returns.
        let agent = Unmanaged.passUnretained(self)
        link.onAdvertisingReport = { report, now in
            agent._withUnsafeGuaranteedRef { $0.ingest(report, at: now) }
        }
        link.onAdvertisingReportsEnd = { [unowned self] now in self.finishIngest(at: now) }
        link.onFatalError = { [unowned self] error in
            self.fatal = error.message
            self.loop.stop()
        }
        link.onExhausted = { [unowned self] in
            // A replay has ended, at its last recorded report: visits still open then
            // stay open (the closing line counts them), as they would at a live door.
            self.log.log(.info, "replay finished" + (self.link?.replayCost.map { ": " + $0 } ?? ""))
            self.loop.stop()
        }

        do {
            try loop.onSignal(.terminate) { [unowned self] in self.shutdown(signal: "SIGTERM") }
            try loop.onSignal(.interrupt) { [unowned self] in self.shutdown(signal: "SIGINT") }
            try loop.onSignal(.hangup) { [unowned self] in self.reload() }
        } catch {
            // As when the controller cannot be opened: every driver built stops.
            finish()
            return .failed("cannot handle signals: \(error)")
        }
        doorBeacon = DoorBeaconAdvertiser.make(on: link, advertise: configuration.advertise, log: log)
        startProofs(link)
        // Who hears what the controller reports, in which order: GatewayAgent+FanOut.
        hearController(link)
        // The controller, the door beacon and connections.
        startDrivers()
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
        indicators.stopping()
        log.log(.notice, "stopping", ["signal": signal])
        loop.stop()
    }

    /// Stops every driver, in reverse start order (docs/architecture.md, "One lifecycle
    /// for every driver"): each before those it uses, so enrolment before the controller
    /// it submits on, and the store, started first, last of all, when it writes what must
    /// survive. Then each is closed in the same order: the controller's hand-back, begun
    /// by its stop and overlapped with that writing, is waited for before the store's file
    /// is closed.
    func finish() {
        lifecycle.stop(drivers)
        lifecycle.close(drivers)
        log.log(.notice, "stopped", [
            "checkins": "\(core.counters.checkins)", "checkouts": "\(core.counters.checkouts)",
            "open_visits": "\(presence.openVisits)",
        ])
        loop.stopHandlingSignals()
    }

    /// The store's stop, once every other driver has stopped: the core's last commit
    /// attempt (`DoorCore.shutdown`), the events still held written to the held-events
    /// file, the closing checkpoint.
    func saveWhatMustSurvive() {
        perform(core.shutdown(at: loop.now))
        perform(storage.keepHeldEvents(core.heldAtShutdown(personIds: configuration.persons.map(\.id))))
        perform(core.saveAll(personIds: configuration.persons.map(\.id)))
    }

    // MARK: Store

    /// A store opened again after trouble: what it holds is restored when the store could
    /// not be opened at start (its stored visits checked out ahead of what was decided
    /// meanwhile: DoorCore.restore); otherwise every record is written again, since the
    /// file may be a fresh one (a corrupt database moved aside) and an open visit's record
    /// must be on disk before a crash could need it. Delivery reads it again.
    func storeReopened(_ store: Store) {
        if !presenceRestored {
            restorePresence()
            siteBus.presenceRestored()
        } else {
            perform(core.saveAll(personIds: configuration.persons.map(\.id)))
        }
        if !delivery.configuredSinks(configuration).isEmpty { delivery.start(configuration) }
    }

    /// Once, with the first store opened: the stored records go into the core (which keeps
    /// what it decided meanwhile when the store opened late).
    func restorePresence() {
        guard let store, !presenceRestored else { return }
        presenceRestored = true
        let stored: [String: [UInt8]]
        do {
            stored = storage.overlayingHeldRecords(try store.loadPresence())
        } catch {
            log.log(.error, "cannot read persisted presence, starting with everyone outside", ["error": error.description])
            return
        }
        perform(core.restore(stored: stored, at: loop.now, clock: readClock()))
    }

    // MARK: Ingest (the hot path)

    /// One report, read in place from its packet (no report value, no copy of its data).
    /// The first report of a batch fires the deadlines due by its time; the batch's end
    /// (`finishIngest`) re-arms the timer and the connect wishes once for all of them.
    func ingest(_ report: LEAdvertisingReportView, at now: Instant) {
        if !core.inBatch {
            if let timeline = link?.replayTimeline {
                core.followReplayClock(origin: timeline.origin, originMicroseconds: timeline.originMicroseconds)
            }
            perform(core.beginReports(at: now, clock: readClock(timeOnly: true), clockReadAt: loop.now))
        }
        let actions = core.report(report, at: now)
        if !actions.isEmpty { perform(actions) }
    }

    func finishIngest(at now: Instant) {
        guard core.inBatch else { return }
        fleet.counters.reports = core.counters.reports
        fleet.counters.tagReports = UInt64(core.counters.tagReports)
        let matcher = core.matcherCounters
        fleet.counters.irkTries = UInt64(matcher.irkTries)
        fleet.counters.resolutionsGated = UInt64(matcher.resolutionsGated)
        fleet.counters.resolutionsDeferred = UInt64(matcher.resolutionsDeferred)
        fleet.counters.resolutionGate = UInt64(core.resolutionGate)
        perform(core.endReports(at: now))
    }

    /// A neighbour's sighting report (docs/neighbours.md): decided on at once, against this
    /// door's own reports up to now. Reports that wait in the kernel while reading pauses
    /// are read first, as for a due deadline (docs/presence.md, "The signal"): else the
    /// door would compare the neighbour's latest with its own of up to a second ago, and a
    /// window left with fewer than `min_samples` reads as "not heard here".
    private func neighbourSighting(_ payload: [UInt8]) {
        link?.readWaitingInput()
        perform(core.neighbourSighting(payload, at: loop.now))
    }

    private func coreTimerFired() {
        // A presence deadline is due: reports that arrived before it and wait in the kernel
        // while reading pauses are decided on first (docs/presence.md, "The signal").
        if core.presenceTransitionDue(at: loop.now) { link?.readWaitingInput() }
        perform(core.tick(at: loop.now, clock: readClock()))
    }

    // MARK: Reload (SIGHUP)

    func reload() {
        let reloaded = indicators.reloading()
        defer { reloaded() }
        log.log(.notice, "reloading configuration", ["path": options.configurationPath])
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
        let previous = configuration
        configuration = fresh
        setLogLevel(Severity(fresh.gateway.logLevel))
        let actions = core.reload(GatewayAgent.doorSetup(fresh, appVersion: options.appVersion), at: loop.now)
        if proofs == nil, core.needsConnections, let link {
            startProofs(link)
            startDrivers()
        }
        perform(actions)
        // After the core: delivery, then the fleet (its persons count).
        lifecycle.reload(drivers, fresh, previous: previous)
        log.log(.notice, "configuration reloaded", ["persons": "\(fresh.persons.count)", "open_visits": "\(presence.openVisits)"])
    }

    /// `[gateway] log_level`, for the agent and every driver.
    func setLogLevel(_ level: Severity) {
        log.minimumLevel = level
        lifecycle.setLogLevel(drivers, level)
    }
}
