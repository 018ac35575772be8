/// Whether the gateway checks people in (see docs/fleet.md): `paused` while the server's
/// roster says so; kept here so every report reads it from one place.
public enum FleetMode: String, Hashable, Sendable {
    case active
    case paused
}

/// Where the persons in force come from, for the heartbeat and `status`.
public struct RosterStatus: Hashable, Sendable {
    /// `file` when no server roster is in use, else `server`.
    public var source: String
    /// The server roster's revision in force; nil for the file.
    public var revision: String?
    /// Persons in force from that source.
    public var persons: Int
    /// The last invalid roster's error, until a valid one arrives.
    public var error: String?

    public init(source: String, revision: String? = nil, persons: Int, error: String? = nil) {
        self.source = source
        self.revision = revision
        self.persons = persons
        self.error = error
    }

    public static func file(persons: Int) -> RosterStatus {
        RosterStatus(source: "file", persons: persons)
    }
}

/// The Bluetooth controller as the fleet sees it.
public struct ControllerSnapshot: Hashable, Sendable {
    public enum State: String, Hashable, Sendable {
        case up, recovering, absent
    }

    public var state: State
    /// `B8:27:EB:00:00:01`; nil before the controller was first read.
    public var address: String?
    /// `legacy` or `extended`; nil before the controller was first read.
    public var family: String?
    public var resets: Int

    public init(state: State, address: String? = nil, family: String? = nil, resets: Int = 0) {
        self.state = state
        self.address = address
        self.family = family
        self.resets = resets
    }
}

/// The outbox in numbers.
public struct OutboxSnapshot: Hashable, Sendable {
    public var pending: Int
    public var dead: Int
    public var rejected: Int
    /// Age of the oldest pending event in seconds, 0 when none is pending.
    public var oldestPendingSeconds: Double

    public init(pending: Int = 0, dead: Int = 0, rejected: Int = 0, oldestPendingSeconds: Double = 0) {
        self.pending = pending
        self.dead = dead
        self.rejected = rejected
        self.oldestPendingSeconds = oldestPendingSeconds
    }
}

/// One person with an open visit, for `status`.
public struct OpenVisitSnapshot: Hashable, Sendable {
    public var personId: String
    /// `PRESENT` or `UNCONFIRMED`.
    public var state: String
    /// Wall-clock milliseconds of the visit's start.
    public var sinceMillis: Int64?
    /// The filtered RSSI now (dBm); nil when the window holds too few samples.
    public var rssi: Int?
    public var tag: String?
    public var proven: Bool

    public init(personId: String, state: String, sinceMillis: Int64?, rssi: Int?, tag: String?, proven: Bool) {
        self.personId = personId
        self.state = state
        self.sinceMillis = sinceMillis
        self.rssi = rssi
        self.tag = tag
        self.proven = proven
    }
}

/// One committed event, as `status` lists the last ones.
public struct RecentEvent: Hashable, Sendable {
    public var sequence: Int64
    public var type: String
    public var personId: String
    public var atMillis: Int64

    public init(sequence: Int64, type: String, personId: String, atMillis: Int64) {
        self.sequence = sequence
        self.type = type
        self.personId = personId
        self.atMillis = atMillis
    }
}

/// What the process itself costs, as Prometheus's standard `process_*` metrics say it.
public struct ProcessSnapshot: Hashable, Sendable {
    public var cpuSeconds: Double
    public var residentBytes: Int
    public var startTimeSeconds: Double

    public init(cpuSeconds: Double, residentBytes: Int, startTimeSeconds: Double) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
        self.startTimeSeconds = startTimeSeconds
    }
}

/// Everything the heartbeat, the metrics and `status` report, taken at one moment: built
/// only when one of them asks, from the counters (kept up as things happen) and the
/// current state of the agent.
public struct FleetSnapshot: Hashable, Sendable {
    public var gatewayId: String
    public var siteId: String?
    public var doorId: String?
    public var version: String
    public var startedAtMillis: Int64
    public var nowMillis: Int64
    public var uptimeSeconds: Int
    public var clockSynced: Bool
    public var mode: FleetMode
    public var controller: ControllerSnapshot
    public var scanning: Bool
    /// Persons with an open visit (PRESENT or UNCONFIRMED).
    public var present: Int
    public var reportsPerSecond: Double
    public var outbox: OutboxSnapshot
    public var roster: RosterStatus
    public var lastEventAtMillis: Int64?
    public var counters: FleetCounters
    public var process: ProcessSnapshot?

    public init(gatewayId: String, siteId: String? = nil, doorId: String? = nil, version: String,
                startedAtMillis: Int64, nowMillis: Int64, uptimeSeconds: Int, clockSynced: Bool,
                mode: FleetMode = .active, controller: ControllerSnapshot, scanning: Bool, present: Int,
                reportsPerSecond: Double, outbox: OutboxSnapshot, roster: RosterStatus, lastEventAtMillis: Int64?,
                counters: FleetCounters, process: ProcessSnapshot? = nil) {
        self.gatewayId = gatewayId
        self.siteId = siteId
        self.doorId = doorId
        self.version = version
        self.startedAtMillis = startedAtMillis
        self.nowMillis = nowMillis
        self.uptimeSeconds = uptimeSeconds
        self.clockSynced = clockSynced
        self.mode = mode
        self.controller = controller
        self.scanning = scanning
        self.present = present
        self.reportsPerSecond = reportsPerSecond
        self.outbox = outbox
        self.roster = roster
        self.lastEventAtMillis = lastEventAtMillis
        self.counters = counters
        self.process = process
    }
}
