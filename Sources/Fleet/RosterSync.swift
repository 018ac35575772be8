import EventLoop

/// The server roster's decisions (see docs/fleet.md), sans-IO: when to ask the server,
/// with which `If-None-Match`, what an answer puts in force, what is kept on disk, and
/// what is worth a log line (each refusal and each change between fetching and failing
/// once). The agent performs the actions; validation is its function, handed in, since
/// what is valid depends on the configuration file of the moment.
///
/// Generic over the validated roster (the agent's is Config's `ServerRoster`), so the
/// schedule and the bookkeeping are tested without a configuration.
public struct RosterSync<Roster> {
    /// A roster that passed validation, with what the fleet reports of it.
    public struct Accepted {
        public var revision: String
        public var mode: FleetMode
        public var persons: Int
        public var roster: Roster

        public init(revision: String, mode: FleetMode, persons: Int, roster: Roster) {
            self.revision = revision
            self.mode = mode
            self.persons = persons
            self.roster = roster
        }
    }

    /// Validates a roster document against the configuration of the moment; the error is
    /// the text logged and sent in heartbeats (revision and JSON path).
    public typealias Validate = ([UInt8]) -> Result<Accepted, RosterRefusal>

    /// How a request ended.
    public enum Answer: Hashable, Sendable {
        /// 304: the roster of that ETag is still current.
        case notModified
        /// 200 with its ETag (nil when the server sent none) and body.
        case roster(etag: String?, body: [UInt8])
        /// Another status, a timeout, a network error: not a roster error.
        case failed(String)
    }

    /// Something to tell the journal (and count); each comes once per change.
    public enum Report: Hashable, Sendable {
        /// A roster was put in force (at start from disk, or from the server).
        case inForce(revision: String, persons: Int, fromDisk: Bool)
        /// A roster was refused; the previous one stays in force.
        case refused(String)
        /// The roster in force is no longer valid beside a reloaded configuration file:
        /// the server's persons are out of force until a roster that fits arrives.
        case withdrawn(String)
        case fetchFailing(String)
        case fetchWorksAgain
    }

    public enum Action {
        /// GET the roster now, with `If-None-Match` when there is an ETag.
        case fetch(ifNoneMatch: String?)
        /// Put these server persons in force beside the file's (nil: none).
        case apply(Roster?)
        /// The door's mode changed.
        case setMode(FleetMode)
        /// Write this to the state directory (atomically, mode 0600).
        case persist(PersistedRoster)
        case report(Report)
    }

    public private(set) var pollInterval: Duration
    /// When the next request goes out; nil while one is in flight.
    public private(set) var nextFetch: Instant?
    public private(set) var etag: String?
    /// The roster in force, and its document (what is persisted).
    public private(set) var inForce: Accepted?
    private var inForceBody: [UInt8]?
    /// The last refusal's text, until a valid roster arrives.
    public private(set) var error: String?
    /// The mode of the last valid roster (a withdrawn roster leaves its mode: a pause is
    /// lifted by the server, never by an edit of the file).
    public private(set) var mode: FleetMode = .active
    /// nil before the first answer.
    private var fetchFailing: Bool?
    private var lastRefusal: String?
    public private(set) var counts = RosterFetchCounts()

    public init(pollInterval: Duration) {
        self.pollInterval = pollInterval
    }

    /// At start: the persisted roster (if any) is put in force when it is still valid,
    /// then the first request goes out at once.
    public mutating func start(at now: Instant, persisted: PersistedRoster?, validate: Validate) -> [Action] {
        var actions: [Action] = []
        if let persisted {
            etag = persisted.etag
            if let body = persisted.body {
                switch validate(body) {
                case let .success(accepted):
                    take(accepted, body: body, into: &actions, fromDisk: true)
                    // A later roster refused before the restart is still refused (its ETag
                    // brings a 304): reported until a valid one arrives, logged once here.
                    if let refused = persisted.error { refuse(refused, into: &actions) }
                case let .failure(refusal):
                    // Not valid beside this file: ask for the whole roster again.
                    etag = nil
                    refuse(refusal.message, into: &actions)
                    actions.append(.persist(persistedState))
                }
            } else if let refused = persisted.error {
                refuse(refused, into: &actions)
            }
        }
        actions.append(fetch())
        return actions
    }

    /// The timer: a request when one is due and none is in flight.
    public mutating func due(at now: Instant) -> [Action] {
        guard let next = nextFetch, now >= next else { return [] }
        return [fetch()]
    }

    public mutating func answered(_ answer: Answer, at now: Instant, validate: Validate) -> [Action] {
        var actions: [Action] = []
        nextFetch = now + pollInterval
        if case let .failed(reason) = answer {
            counts.failed &+= 1
            if fetchFailing != true { actions.append(.report(.fetchFailing(reason))) }
            fetchFailing = true
            return actions
        }
        if fetchFailing == true { actions.append(.report(.fetchWorksAgain)) }
        fetchFailing = false
        guard case let .roster(newTag, body) = answer else {
            counts.unchanged &+= 1
            return actions
        }
        let etagChanged = newTag != etag
        etag = newTag
        if let inForceBody, body == inForceBody, error == nil {
            counts.unchanged &+= 1
            if etagChanged { actions.append(.persist(persistedState)) }
            return actions
        }
        switch validate(body) {
        case let .success(accepted):
            counts.updated &+= 1
            take(accepted, body: body, into: &actions, fromDisk: false)
        case let .failure(refusal):
            counts.refused &+= 1
            refuse(refusal.message, into: &actions)
        }
        actions.append(.persist(persistedState))
        return actions
    }

    /// The configuration file was reloaded: the roster in force is checked beside it again.
    /// Returns what to merge (the agent applies file and roster together) and what to do.
    public mutating func fileReloaded(validate: Validate) -> (roster: Roster?, actions: [Action]) {
        guard let body = inForceBody else { return (nil, []) }
        switch validate(body) {
        case let .success(accepted):
            inForce = accepted
            return (accepted.roster, [])
        case let .failure(refusal):
            inForce = nil
            inForceBody = nil
            // Ask for the whole roster again: the server's next answer is checked anew.
            etag = nil
            error = refusal.message
            lastRefusal = refusal.message
            return (nil, [.report(.withdrawn(refusal.message)), .persist(persistedState)])
        }
    }

    public mutating func setPollInterval(_ interval: Duration, at now: Instant) {
        pollInterval = interval
        if let next = nextFetch, next > now + interval { nextFetch = now + interval }
    }

    /// The heartbeat's and `status`'s `roster`: `server` while a server roster is in force.
    public func status(filePersons: Int) -> RosterStatus {
        guard let inForce else { return RosterStatus(source: "file", persons: filePersons, error: error) }
        return RosterStatus(source: "server", revision: inForce.revision, persons: inForce.persons, error: error)
    }

    public var persistedState: PersistedRoster {
        PersistedRoster(etag: etag, error: error, body: inForceBody)
    }

    // MARK: Internals

    private mutating func fetch() -> Action {
        nextFetch = nil
        return .fetch(ifNoneMatch: etag)
    }

    private mutating func take(_ accepted: Accepted, body: [UInt8], into actions: inout [Action], fromDisk: Bool) {
        inForce = accepted
        inForceBody = body
        error = nil
        lastRefusal = nil
        actions.append(.apply(accepted.roster))
        actions.append(.report(.inForce(revision: accepted.revision, persons: accepted.persons, fromDisk: fromDisk)))
        if accepted.mode != mode {
            mode = accepted.mode
            actions.append(.setMode(accepted.mode))
        }
    }

    private mutating func refuse(_ message: String, into actions: inout [Action]) {
        error = message
        if message != lastRefusal { actions.append(.report(.refused(message))) }
        lastRefusal = message
    }
}

/// Why a roster was refused: a text holding its revision and the JSON path.
public struct RosterRefusal: Error, Hashable, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}

/// How roster requests ended since start.
public struct RosterFetchCounts: Hashable, Sendable {
    /// 200 with a new valid roster.
    public var updated: UInt64 = 0
    /// 304, or 200 with the roster in force.
    public var unchanged: UInt64 = 0
    /// 200 with an invalid roster.
    public var refused: UInt64 = 0
    /// Timeouts, network errors, other statuses.
    public var failed: UInt64 = 0

    public init() {}
}

extension RosterSync.Action: Equatable where Roster: Equatable {}
extension RosterSync.Accepted: Equatable where Roster: Equatable {}
