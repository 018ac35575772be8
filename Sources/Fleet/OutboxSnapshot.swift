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

/// One outbox sink in numbers (docs/event-api.md, "Sinks"): the `server`, the `mqtt`
/// broker; for the heartbeat's `sinks`, the `beacon_gateway_sink_*` metrics and `status`.
public struct SinkSnapshot: Hashable, Sendable {
    public var name: String
    public var pending: Int
    public var dead: Int
    public var rejected: Int
    /// Age of its oldest pending event in seconds, 0 when none is pending.
    public var oldestPendingSeconds: Double
    public var lastSuccessMillis: Int64?
    /// Its last failure's time, class and text while it is failing (no success since); nil otherwise.
    public var lastErrorMillis: Int64?
    public var lastErrorClass: String?
    public var lastError: String?

    public init(name: String, pending: Int = 0, dead: Int = 0, rejected: Int = 0, oldestPendingSeconds: Double = 0,
                lastSuccessMillis: Int64? = nil, lastErrorMillis: Int64? = nil, lastErrorClass: String? = nil,
                lastError: String? = nil) {
        self.name = name
        self.pending = pending
        self.dead = dead
        self.rejected = rejected
        self.oldestPendingSeconds = oldestPendingSeconds
        self.lastSuccessMillis = lastSuccessMillis
        self.lastErrorMillis = lastErrorMillis
        self.lastErrorClass = lastErrorClass
        self.lastError = lastError
    }
}
