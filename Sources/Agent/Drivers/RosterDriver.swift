import AttendanceEvents
import Config
import EventLoop
import Fleet
import Forwarder
import Journal

/// The roster from the server (see docs/fleet.md): `RosterSync` decides, this performs:
/// requests through `RosterFetcher` on the sync's schedule, the roster file in
/// `state_dir`, the log lines; a roster put in force and the door's mode go to the agent
/// through `Hooks`.
final class RosterDriver {
    struct Hooks {
        /// The configuration file's persons with a new server roster's: put in force
        /// (the path SIGHUP takes).
        var apply: (GatewayConfiguration) -> Void
        var setMode: (DoorMode) -> Void
        /// Called before each request: events first, whatever delivery is due starts
        /// before the request does.
        var beforeFetch: () -> Void
        /// Called when the first request is due, once the loop runs.
        var firstFetchDue: () -> Void
        /// The fetch counters changed.
        var counted: (RosterFetchCounts) -> Void
    }

    private let loop: EventLoop
    var log: LogSink
    private let appVersion: String
    private let hooks: Hooks
    /// Where the roster file is kept: the store's directory, fixed at start (`state_dir`
    /// applies on restart).
    private let stateDirectory: String
    /// The real clock, for what a roster switch took (every decision reads the loop's).
    private let systemClock = SystemClock()
    private var sync: RosterSync<ServerRoster>
    /// The configuration file as last read: the server's persons join its persons.
    private var file: GatewayConfiguration
    private var fetcher: RosterFetcher?
    private var timer: EventLoop.TimerHandle?
    /// When the answer being handled arrived: a switch's log line says what it took.
    private var answerArrived: Instant?
    /// What validating the answer took (parse included).
    private var validation: Duration = .zero

    init(loop: EventLoop, log: LogSink, appVersion: String, file: GatewayConfiguration, stateDirectory: String, pollInterval: Duration,
         hooks: Hooks) {
        self.loop = loop
        self.stateDirectory = stateDirectory
        self.log = log
        self.appVersion = appVersion
        self.hooks = hooks
        self.file = file
        sync = RosterSync(pollInterval: pollInterval)
    }

    /// Reads the roster file and starts the sync beside `file`, the configuration file as
    /// read: the persisted roster, when it is still valid, is in force at once
    /// (`inForce`, for the agent to merge before presence is restored). The first request
    /// goes out as soon as the loop runs.
    func start(_ file: GatewayConfiguration) {
        self.file = file
        var persisted: PersistedRoster?
        do {
            persisted = try RosterFile.read(stateDirectory: stateDirectory, limit: ServerRoster.maximumSize)
        } catch {
            log.log(.warning, "last server roster not used", ["error": error.description])
        }
        for action in sync.start(at: loop.now, persisted: persisted, validate: validate) {
            switch action {
            // Read through `inForce`: at start it joins the file's persons before anything is decided.
            case .apply: break
            case let .fetch(etag): scheduleFirstFetch(etag: etag)
            default: perform([action])
            }
        }
    }

    /// The server roster in force, nil while the file's persons are the only ones.
    var inForce: ServerRoster? { sync.inForce?.roster }

    /// SIGHUP: the file just read; returns the server roster that still fits beside it.
    func fileReloaded(_ fresh: GatewayConfiguration) -> ServerRoster? {
        file = fresh
        if let server = fresh.server {
            do {
                try fetcher?.reload(ForwarderConfiguration(server: server, gateway: fresh.gateway, appVersion: appVersion))
            } catch {
                log.log(.error, "roster request settings not reloaded", ["error": "\(error)"])
            }
            sync.setPollInterval(server.rosterPollInterval, at: loop.now)
            scheduleFetch()
        }
        let (roster, actions) = sync.fileReloaded(validate: validate)
        perform(actions)
        return roster
    }

    func stop() {
        fetcher?.stop()
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    /// The heartbeat's and `status`'s `roster`.
    var status: RosterStatus { sync.status(filePersons: file.persons.count) }

    // MARK: Performing

    /// Checks a roster document beside the file's persons (same rules, JSON paths).
    private var validate: RosterSync<ServerRoster>.Validate {
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

    private func perform(_ actions: [RosterSync<ServerRoster>.Action]) {
        for action in actions {
            switch action {
            case let .fetch(etag):
                guard let fetcher = ensureFetcher() else { continue }
                hooks.beforeFetch()
                fetcher.fetch(ifNoneMatch: etag)
            case let .apply(roster):
                hooks.apply(file.merging(roster))
            case let .setMode(mode):
                hooks.setMode(mode)
            case let .persist(state):
                do {
                    try RosterFile.write(state, stateDirectory: stateDirectory)
                } catch {
                    log.log(.error, "cannot keep the server roster", ["error": error.description])
                }
            case let .report(report):
                log(report)
            }
        }
    }

    /// The fetcher, created when there is none yet. One that cannot be created (an
    /// unreadable `ca_file`, libcurl without memory) is a failed request to the sync:
    /// logged once as `roster fetch failing`, counted, and tried again at the next poll.
    private func ensureFetcher() -> RosterFetcher? {
        if let fetcher { return fetcher }
        guard let server = file.server else { return nil }
        do {
            fetcher = try RosterFetcher(
                loop: loop, configuration: ForwarderConfiguration(server: server, gateway: file.gateway, appVersion: appVersion),
                answerLimit: ServerRoster.maximumSize
            ) { [unowned self] outcome in self.answered(outcome) }
            return fetcher
        } catch {
            answered(.failed("cannot start roster requests: \(error)"))
            return nil
        }
    }

    private func log(_ report: RosterSync<ServerRoster>.Report) {
        switch report {
        case let .inForce(revision, persons, fromDisk):
            let from = fromDisk ? "disk" : "server"
            if let arrived = answerArrived {
                // Parse, validation and apply (presence, matcher, connections): the switch.
                log.log(.notice, "server roster in force", [
                    "revision": revision, "persons": "\(persons)", "from": from,
                    "took_ms": Self.milliseconds(systemClock.now - arrived), "validate_ms": Self.milliseconds(validation),
                ])
            } else {
                log.log(.notice, "server roster in force", ["revision": revision, "persons": "\(persons)", "from": from])
            }
        case let .refused(message):
            if answerArrived != nil {
                // What reading it took: bounded by the limits however the document is made.
                log.log(.error, "server roster refused, the previous one stays",
                        ["error": message, "validate_ms": Self.milliseconds(validation)])
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

    private func answered(_ answer: RosterAnswer) {
        answerArrived = systemClock.now
        // A roster in force again, or a document refused before, is not validated: its
        // log line must not show the last validation's time.
        validation = .zero
        defer { answerArrived = nil }
        let actions = sync.answered(answer, at: loop.now, validate: validate)
        hooks.counted(sync.counts)
        perform(actions)
        scheduleFetch()
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let millis = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return "\((millis * 10).rounded() / 10)"
    }

    /// The first request, as soon as the loop runs.
    private func scheduleFirstFetch(etag: String?) {
        timer = loop.schedule(after: .zero) { [unowned self] in
            self.timer = nil
            self.hooks.firstFetchDue()
            self.perform([.fetch(ifNoneMatch: etag)])
        }
    }

    /// The timer for the next request; none while one is in flight (its answer sets it).
    private func scheduleFetch() {
        guard let next = sync.nextFetch else { return }
        if let timer { loop.cancel(timer) }
        timer = loop.schedule(after: max(.zero, next - loop.now)) { [unowned self] in
            self.timer = nil
            self.perform(self.sync.due(at: self.loop.now))
            self.scheduleFetch()
        }
    }
}

extension RosterDriver: AgentDriver {
    /// Nothing here: a new file reaches the roster before it is put in force
    /// (`fileReloaded`, GatewayAgent+Roster), since what the roster keeps of the server's
    /// persons decides the configuration every other driver is reloaded with; a roster
    /// of its own is put in force through the same path.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {}
}
