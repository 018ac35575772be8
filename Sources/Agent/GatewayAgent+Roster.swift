#if canImport(Glibc)
import Glibc
#endif
import Config
import EventLoop
import Fleet
import Forwarder
import Journal

/// The server roster's side of the agent (see docs/fleet.md): `RosterSync` decides, this
/// performs: requests through `RosterFetcher`, the merged configuration through `apply`
/// (the path SIGHUP takes), the mode through `setMode`, the roster file in `state_dir`.
final class ServerRosterDriver {
    var sync: RosterSync<ServerRoster>
    /// The configuration file as last read: the server's persons join its persons.
    var file: GatewayConfiguration
    var fetcher: RosterFetcher?
    var timer: EventLoop.TimerHandle?
    /// When the answer being handled arrived: a switch's log line says what it took.
    var answerArrived: Instant?
    /// What validating the answer took (parse included).
    var validation: Duration = .zero

    init(file: GatewayConfiguration, pollInterval: Duration) {
        self.file = file
        sync = RosterSync(pollInterval: pollInterval)
    }

    /// Checks a roster document beside the file's persons (same rules, JSON paths).
    var validate: RosterSync<ServerRoster>.Validate {
        { [unowned self, file] body in
            let clock = SystemClock()
            let started = clock.now
            defer { self.validation = clock.now - started }
            return ServerRoster.validate(body, alongside: file)
                .map { roster in
                    RosterSync.Accepted(revision: roster.revision, mode: roster.mode,
                                        persons: roster.persons.count, roster: roster)
                }
                .mapError { RosterRefusal($0.description) }
        }
    }
}

extension GatewayAgent {
    /// At start, before presence is restored: the last valid roster from disk joins the
    /// file's persons at once (persons present before a restart stay known, so they keep
    /// their visit), and the first request goes out as soon as the loop runs.
    func startRoster() {
        guard let roster = beginRosterSync(file: configuration) else { return }
        configuration = configuration.merging(roster)
        // Nobody's state is known yet (it is restored next): no event can come of this.
        perform(core.reload(GatewayAgent.doorSetup(configuration, appVersion: options.appVersion), at: loop.now))
    }

    /// SIGHUP: the file just read, with the server persons in force that still fit beside
    /// it. `[server] roster` switched on starts the requests; switched off ends them.
    func mergingServerRoster(_ fresh: GatewayConfiguration) -> GatewayConfiguration {
        guard fresh.server?.roster == true else {
            if fleet.serverRoster != nil {
                stopRoster()
                fleet.serverRoster = nil
                log.log(.notice, "server roster off: persons from the file only")
                setMode(.active)
            }
            return fresh
        }
        guard let driver = fleet.serverRoster else {
            return fresh.merging(beginRosterSync(file: fresh))
        }
        driver.file = fresh
        if let server = fresh.server {
            do {
                try driver.fetcher?.reload(ForwarderConfiguration(server: server, gateway: fresh.gateway, appVersion: options.appVersion))
            } catch {
                log.log(.error, "roster request settings not reloaded", ["error": "\(error)"])
            }
            driver.sync.setPollInterval(server.rosterPollInterval, at: loop.now)
            scheduleRosterFetch(driver)
        }
        let (roster, actions) = driver.sync.fileReloaded(validate: driver.validate)
        perform(actions, driver)
        return fresh.merging(roster)
    }

    func stopRoster() {
        guard let driver = fleet.serverRoster else { return }
        driver.fetcher?.stop()
        if let timer = driver.timer { loop.cancel(timer) }
        driver.timer = nil
    }

    /// The heartbeat's and `status`'s `roster`.
    func rosterStatus() -> RosterStatus {
        guard let driver = fleet.serverRoster else { return fleet.roster }
        return driver.sync.status(filePersons: driver.file.persons.count)
    }

    /// Green blinks while paused; `STATUS=` says it.
    func showMode() {
        leds?.update { [fleet] engine, now in engine.setPaused(fleet.mode == .paused, at: now) }
        updateStatus()
    }

    // MARK: Performing

    /// Creates the driver, reads the roster file and starts the sync (the fetcher comes
    /// with the first request);
    /// returns the persisted roster to merge when it is still valid.
    private func beginRosterSync(file: GatewayConfiguration) -> ServerRoster? {
        guard let server = file.server, server.roster else { return nil }
        let driver = ServerRosterDriver(file: file, pollInterval: server.rosterPollInterval)
        fleet.serverRoster = driver
        var persisted: PersistedRoster?
        do {
            persisted = try RosterFile.read(stateDirectory: file.gateway.stateDirectory, limit: ServerRoster.maximumSize)
        } catch {
            log.log(.warning, "last server roster not used", ["error": error.description])
        }
        var merged: ServerRoster?
        let actions = driver.sync.start(at: loop.now, persisted: persisted, validate: driver.validate)
        for action in actions {
            switch action {
            case let .apply(roster): merged = roster
            case let .fetch(etag): scheduleFirstRosterFetch(driver, etag: etag)
            default: perform([action], driver)
            }
        }
        return merged
    }

    private func perform(_ actions: [RosterSync<ServerRoster>.Action], _ driver: ServerRosterDriver) {
        for action in actions {
            switch action {
            case let .fetch(etag):
                guard let fetcher = ensureRosterFetcher(driver) else { continue }
                // Events first: whatever delivery is due starts before the request does.
                forwarder?.kick()
                fetcher.fetch(ifNoneMatch: etag)
            case let .apply(roster):
                apply(driver.file.merging(roster))
            case let .setMode(mode):
                setMode(mode)
            case let .persist(state):
                do {
                    try RosterFile.write(state, stateDirectory: driver.file.gateway.stateDirectory)
                } catch {
                    log.log(.error, "cannot keep the server roster", ["error": error.description])
                }
            case let .report(report):
                log(report, driver)
            }
        }
    }

    /// The roster's fetcher, created when there is none yet. One that cannot be created
    /// (an unreadable `ca_file`, libcurl without memory) is a failed request to the sync:
    /// logged once as `roster fetch failing`, counted, and tried again at the next poll.
    private func ensureRosterFetcher(_ driver: ServerRosterDriver) -> RosterFetcher? {
        if let fetcher = driver.fetcher { return fetcher }
        guard let server = driver.file.server else { return nil }
        do {
            driver.fetcher = try RosterFetcher(
                loop: loop, configuration: ForwarderConfiguration(server: server, gateway: driver.file.gateway, appVersion: options.appVersion),
                answerLimit: ServerRoster.maximumSize
            ) { [unowned self, unowned driver] outcome in self.rosterAnswered(outcome, driver) }
            return driver.fetcher
        } catch {
            rosterAnswered(.failed("cannot start roster requests: \(error)"), driver)
            return nil
        }
    }

    private func log(_ report: RosterSync<ServerRoster>.Report, _ driver: ServerRosterDriver) {
        switch report {
        case let .inForce(revision, persons, fromDisk):
            let from = fromDisk ? "disk" : "server"
            if let arrived = driver.answerArrived {
                // Parse, validation and apply (presence, matcher, connections): the switch.
                log.log(.notice, "server roster in force", [
                    "revision": revision, "persons": "\(persons)", "from": from,
                    "took_ms": Self.milliseconds(systemClock.now - arrived), "validate_ms": Self.milliseconds(driver.validation),
                ])
            } else {
                log.log(.notice, "server roster in force", ["revision": revision, "persons": "\(persons)", "from": from])
            }
        case let .refused(message):
            if driver.answerArrived != nil {
                // What reading it took: bounded by the limits however the document is made.
                log.log(.error, "server roster refused, the previous one stays",
                        ["error": message, "validate_ms": Self.milliseconds(driver.validation)])
            } else {
                log.log(.error, "server roster refused, the previous one stays", ["error": message])
            }
        case let .withdrawn(message):
            log.log(.error, "server roster withdrawn: it does not fit the configuration file", ["error": message])
        case let .fetchFailing(reason):
            log.log(.warning, "roster fetch failing", ["error": reason])
        case .fetchWorksAgain:
            log.log(.notice, "roster fetch works again")
        case let .etagNotKept(reason):
            log.log(.warning, "roster ETag not kept: every request asks for the whole roster", ["reason": reason])
        }
    }

    private func rosterAnswered(_ outcome: RosterFetcher.Outcome, _ driver: ServerRosterDriver) {
        let answer: RosterSync<ServerRoster>.Answer
        switch outcome {
        case .notModified: answer = .notModified
        case let .roster(etag, body): answer = .roster(etag: etag, body: body)
        case let .failed(reason): answer = .failed(reason)
        }
        driver.answerArrived = systemClock.now
        // A roster in force again, or a document refused before, is not validated: its
        // log line must not show the last validation's time.
        driver.validation = .zero
        defer { driver.answerArrived = nil }
        let actions = driver.sync.answered(answer, at: loop.now, validate: driver.validate)
        fleet.counters.rosterFetches = driver.sync.counts
        perform(actions, driver)
        scheduleRosterFetch(driver)
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let millis = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return "\((millis * 10).rounded() / 10)"
    }

    /// The first request, as soon as the loop runs (the LEDs exist by then: show the mode).
    private func scheduleFirstRosterFetch(_ driver: ServerRosterDriver, etag: String?) {
        driver.timer = loop.schedule(after: .zero) { [unowned self, unowned driver] in
            driver.timer = nil
            self.showMode()
            self.perform([.fetch(ifNoneMatch: etag)], driver)
        }
    }

    /// The timer for the next request; none while one is in flight (its answer sets it).
    private func scheduleRosterFetch(_ driver: ServerRosterDriver) {
        guard let next = driver.sync.nextFetch else { return }
        if let timer = driver.timer { loop.cancel(timer) }
        driver.timer = loop.schedule(after: max(.zero, next - loop.now)) { [unowned self, unowned driver] in
            driver.timer = nil
            self.perform(driver.sync.due(at: self.loop.now), driver)
            self.scheduleRosterFetch(driver)
        }
    }
}
