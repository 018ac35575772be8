import AttendanceEvents

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
    public var mode: DoorMode
    public var controller: ControllerSnapshot
    public var scanning: Bool
    /// Persons with an open visit (PRESENT or UNCONFIRMED).
    public var present: Int
    public var reportsPerSecond: Double
    /// The whole outbox: the configured sink furthest behind (docs/event-api.md, "Sinks").
    public var outbox: OutboxSnapshot
    /// Each configured sink's own figures, in its order of start; empty without a sink.
    public var sinks: [SinkSnapshot] = []
    public var roster: RosterStatus
    public var lastEventAtMillis: Int64?
    public var counters: FleetCounters
    public var process: ProcessSnapshot?
    /// The site bus; nil without `[mqtt]`.
    public var bus: BusSnapshot?
    /// The neighbouring doors; nil without `[site]` neighbours.
    public var neighbours: NeighboursSnapshot?

    public init(gatewayId: String, siteId: String? = nil, doorId: String? = nil, version: String,
                startedAtMillis: Int64, nowMillis: Int64, uptimeSeconds: Int, clockSynced: Bool,
                mode: DoorMode = .active, controller: ControllerSnapshot, scanning: Bool, present: Int,
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
