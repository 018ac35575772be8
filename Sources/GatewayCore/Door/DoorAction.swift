import EventLoop
import HCI

/// What the door core asks its driver to do, in the order given (see `DoorCore`).
public enum DoorAction: Sendable {
    /// Store these events and presence records in ONE transaction, then report how it
    /// went with `DoorCore.commitFinished`.
    case commit(DoorCommitBatch)
    /// Save presence records without events (a checkpoint), then report with
    /// `DoorCore.checkpointFinished`.
    case checkpoint(DoorCheckpoint)
    /// The connect scheduler should (no longer) hold a connection to the tag.
    case want(tagIndex: Int, peer: ConnectPeer, tracked: Bool)
    case unwant(tagIndex: Int)
    /// Run the proof handshake on a new connection.
    case startProof(DoorProofStart)
    /// Close a connection nobody needs.
    case disconnect(handle: UInt16)
    case log(DoorLogLine)
    /// Something to show or count outside (LEDs, the fleet's counters, the forwarder).
    case indicate(DoorIndication)
    /// The one timer the driver keeps: call `DoorCore.tick` at this instant (nil: none).
    case armTimer(Instant?)
}

/// Events and the presence records that go with them: stored together or not at all.
public struct DoorCommitBatch: Hashable, Sendable {
    /// In decision order; `sequence` is 0: the store allocates it and the body is rendered
    /// with it (`AttendanceEvent.jsonBody`).
    public var events: [AttendanceEvent]
    public var records: [DoorRecordWrite]

    public init(events: [AttendanceEvent], records: [DoorRecordWrite]) {
        self.events = events
        self.records = records
    }
}

/// A checkpoint of presence (see docs/presence.md, "Restart rules").
public struct DoorCheckpoint: Hashable, Sendable {
    public var records: [DoorRecordWrite]
    /// Durable (wait for the disk) or relaxed (the write reaches the kernel only).
    public var durable: Bool
}

public enum DoorRecordWrite: Hashable, Sendable {
    /// Replace the record stored under `key` (a person id or `LastHeardDigest.storageKey`).
    case save(key: String, record: [UInt8])
    case delete(key: String)

    public var key: String {
        switch self {
        case let .save(key, _), let .delete(key): key
        }
    }
}

/// How the store answered a `DoorCommitBatch`.
public enum DoorCommitResult: Hashable, Sendable {
    /// Stored: one sequence per event of the batch, nil where its idempotency key was
    /// already stored (a decision made again after a crash: nothing new).
    case committed(sequences: [Int64?])
    /// Nothing of the batch was stored.
    case failed(DoorStoreFailure)
}

public struct DoorStoreFailure: Hashable, Sendable {
    public var message: String
    /// The outbox is at its cap (not a fault of the disk: the server must take the backlog).
    public var outboxFull: Bool
    /// Disk trouble (full, read-only, corrupt, locked, no store): the driver reports its
    /// changes once, so the core does not log each failed attempt.
    public var isDiskTrouble: Bool

    public init(message: String, outboxFull: Bool, isDiskTrouble: Bool = false) {
        self.message = message
        self.outboxFull = outboxFull
        self.isDiskTrouble = isDiskTrouble
    }
}

public struct DoorProofStart: Hashable, Sendable {
    public var tagIndex: Int
    public var handle: UInt16
    public var tagId: String
    public var key: TagKey
    public var cachedHandles: ProofBook.CachedHandles?
    /// When the connection came up (the handshake's start).
    public var at: Instant
}

public enum DoorIndication: Hashable, Sendable {
    /// An event was committed: blink, count, kick the forwarder.
    case committed(AttendanceEvent)
    /// A handshake failed (the red LED's three flashes).
    case proofFailed
    /// A proof finished (the fleet's counters).
    case proofFinished(ok: Bool)
}

/// A log line: the driver writes it to the journal as it is.
public struct DoorLogLine: Sendable {
    /// syslog's priorities (the journal's `PRIORITY`).
    public enum Level: Int32, Sendable {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7
    }

    public var level: Level
    public var message: String
    public var fields: KeyValuePairs<String, String>

    public init(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        self.level = level
        self.message = message
        self.fields = fields
    }
}

/// A reading of the system's wall clock, taken by the driver when it hands time in.
public struct WallClockReading: Hashable, Sendable {
    public var wallMilliseconds: Int64
    /// The kernel says the clock is synchronised (events say so when it is not); nil when
    /// not asked this time (the last answer holds). Asking costs system calls, so the
    /// driver asks at the timer and for the status line, not for every batch of reports.
    public var synchronised: Bool?

    public init(wallMilliseconds: Int64, synchronised: Bool?) {
        self.wallMilliseconds = wallMilliseconds
        self.synchronised = synchronised
    }
}

/// The server's switch for the whole door (docs/fleet.md).
public enum DoorMode: String, Hashable, Sendable {
    case active
    case paused
}
