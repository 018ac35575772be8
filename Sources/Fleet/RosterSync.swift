import AttendanceEvents
import BluetoothCrypto
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
        public var mode: DoorMode
        public var persons: Int
        public var roster: Roster

        public init(revision: String, mode: DoorMode, persons: Int, roster: Roster) {
            self.revision = revision
            self.mode = mode
            self.persons = persons
            self.roster = roster
        }
    }

    /// Validates a roster document against the configuration of the moment; the error is
    /// the text logged and sent in heartbeats (revision and JSON path).
    public typealias Validate = ([UInt8]) -> Result<Accepted, RosterRefusal>

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
        /// The answer's ETag is not kept (too long, or not sendable back in a header): the
        /// next request asks for the whole roster. Once until a usable ETag comes.
        case etagNotKept(String)
    }

    public enum Action {
        /// GET the roster now, with `If-None-Match` when there is an ETag.
        case fetch(ifNoneMatch: String?)
        /// Put these server persons in force beside the file's (nil: none).
        case apply(Roster?)
        /// The door's mode changed.
        case setMode(DoorMode)
        /// Write this to the state directory (atomically, mode 0600).
        case persist(PersistedRoster)
        case report(Report)
    }

    /// The longest ETag kept and sent back in `If-None-Match` (docs/fleet.md).
    public static var maximumETagBytes: Int { 256 }

    public private(set) var pollInterval: Duration
    /// When the next request goes out; nil while one is in flight.
    public private(set) var nextFetch: Instant?
    /// What the next request sends in `If-None-Match`: the ETag of the last 200 answer,
    /// valid or refused, until a reload of the file makes a refusal worth checking again.
    public private(set) var etag: String?
    /// The roster in force, its document and its ETag (what is persisted).
    public private(set) var inForce: Accepted?
    private var inForceBody: [UInt8]?
    private var inForceETag: String?
    /// The last refusal's text, until a valid roster arrives.
    public private(set) var error: String?
    /// The SHA-256 of the last refused document: the same bytes again are refused unread
    /// (a server that ignores `If-None-Match` sends them at every poll).
    private var refusedDigest: [UInt8]?
    /// The mode of the last valid roster (a withdrawn roster leaves its mode: a pause is
    /// lifted by the server, never by an edit of the file).
    public private(set) var mode: DoorMode = .active
    /// nil before the first answer.
    private var fetchFailing: Bool?
    private var lastRefusal: String?
    private var etagNotKeptReported = false
    public private(set) var counts = RosterFetchCounts()

    public init(pollInterval: Duration) {
        self.pollInterval = pollInterval
    }

    /// At start: the persisted roster (if any) is put in force when it is still valid,
    /// then the first request goes out at once. A refusal kept on disk is reported, and
    /// its roster asked for again in full: the file may have changed since.
    public mutating func start(at now: Instant, persisted: PersistedRoster?, validate: Validate) -> [Action] {
        var actions: [Action] = []
        if let persisted {
            if let body = persisted.body {
                switch validate(body) {
                case let .success(accepted):
                    take(accepted, body: body, etag: persisted.error == nil ? persisted.etag : nil, into: &actions, fromDisk: true)
                    if let refused = persisted.error { refuse(refused, into: &actions) }
                case let .failure(refusal):
                    // Not valid beside this file: ask for the whole roster again.
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

    public mutating func answered(_ answer: RosterAnswer, at now: Instant, validate: Validate) -> [Action] {
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
        guard case let .roster(answerTag, body) = answer else {
            counts.unchanged &+= 1
            return actions
        }
        let newTag = kept(answerTag, into: &actions)
        etag = newTag
        if let inForceBody, body == inForceBody {
            // The roster in force (checked beside the file at its last reload): nothing to
            // parse or write. A refusal reported meanwhile is over: the server is back to it.
            counts.unchanged &+= 1
            inForceETag = newTag
            if error != nil, let inForce {
                error = nil
                lastRefusal = nil
                refusedDigest = nil
                actions.append(.report(.inForce(revision: inForce.revision, persons: inForce.persons, fromDisk: false)))
            }
            return actions
        }
        let digest = SHA256.hash(body)
        if digest == refusedDigest {
            counts.refusedAgain &+= 1
            return actions
        }
        switch validate(body) {
        case let .success(accepted):
            counts.updated &+= 1
            take(accepted, body: body, etag: newTag, into: &actions, fromDisk: false)
            actions.append(.persist(persistedState))
        case let .failure(refusal):
            // Nothing in force changed: nothing to write.
            counts.refused &+= 1
            refusedDigest = digest
            refuse(refusal.message, into: &actions)
        }
        return actions
    }

    /// The configuration file was reloaded: the roster in force is checked beside it again,
    /// and a refused roster will be: its ETag and digest are forgotten, so the next request
    /// asks for the whole roster (a refusal may have been a conflict with the old file).
    /// Returns what to merge (the agent applies file and roster together) and what to do.
    public mutating func fileReloaded(validate: Validate) -> (roster: Roster?, actions: [Action]) {
        if refusedDigest != nil || error != nil {
            refusedDigest = nil
            etag = nil
        }
        guard let body = inForceBody else { return (nil, []) }
        switch validate(body) {
        case let .success(accepted):
            inForce = accepted
            return (accepted.roster, [])
        case let .failure(refusal):
            inForce = nil
            inForceBody = nil
            inForceETag = nil
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

    /// What `roster.json` holds: the roster in force, its ETag, and the error reported
    /// when it was written (a withdrawal's).
    public var persistedState: PersistedRoster {
        PersistedRoster(etag: inForceETag, error: error, body: inForceBody)
    }

    // MARK: Internals

    private mutating func fetch() -> Action {
        nextFetch = nil
        return .fetch(ifNoneMatch: etag)
    }

    /// The answer's ETag when it can be sent back: visible ASCII, at most
    /// ``maximumETagBytes``. Another is dropped, said once; the roster is still used.
    private mutating func kept(_ tag: String?, into actions: inout [Action]) -> String? {
        guard let tag, !tag.isEmpty else { return nil }
        let reason: String
        if tag.utf8.count > Self.maximumETagBytes {
            reason = "an ETag of \(tag.utf8.count) bytes (at most \(Self.maximumETagBytes) are kept)"
        } else if !tag.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            reason = "an ETag with bytes a header may not carry"
        } else {
            etagNotKeptReported = false
            return tag
        }
        if !etagNotKeptReported { actions.append(.report(.etagNotKept(reason))) }
        etagNotKeptReported = true
        return nil
    }

    private mutating func take(_ accepted: Accepted, body: [UInt8], etag: String?, into actions: inout [Action], fromDisk: Bool) {
        inForce = accepted
        inForceBody = body
        inForceETag = etag
        self.etag = etag
        error = nil
        lastRefusal = nil
        refusedDigest = nil
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
    /// 200 with an invalid roster, read and refused.
    public var refused: UInt64 = 0
    /// 200 with the very document refused last, not read again.
    public var refusedAgain: UInt64 = 0
    /// Timeouts, network errors, other statuses.
    public var failed: UInt64 = 0

    public init() {}
}

extension RosterSync.Action: Equatable where Roster: Equatable {}
extension RosterSync.Accepted: Equatable where Roster: Equatable {}
