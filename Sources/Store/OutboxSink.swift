/// One consumer of the outbox (docs/event-api.md, "Sinks"): the HTTP server (`server`,
/// the Forwarder target), the site's MQTT broker (`mqtt`), whatever comes next. Each has its
/// own progress per event in the store (`Store.pendingEvents(sink:after:limit:)`,
/// `Store.record(_:sink:atMillis:)`), its own retries and its own figures; one sink down
/// never holds another back.
///
/// The protocol lives in Store because a sink is defined by what it does with the outbox
/// and nothing else: every sink's target depends on Store already, and the agent, which
/// holds the list of sinks, sees it there without a target of its own. How a sink is made
/// from the configuration is the agent's (`SinkWiring`), since Store knows no configuration.
///
/// All of it runs on the agent's event loop.
public protocol OutboxSink: AnyObject {
    /// Its name in the store, the logs, `outbox status`, the metrics and the heartbeat
    /// (`server`, `mqtt`): lowercase, stable across versions.
    var name: String { get }

    /// Starts delivering what the outbox holds for it.
    func start()

    /// Stops: nothing more is sent or scheduled. Deliveries under way are abandoned; their
    /// events stay pending for it and go again, under the same key, at the next start.
    func stop()

    /// Events were committed: look for work now rather than at the next wake-up.
    func kick()

    /// Its state for the fleet (the heartbeat, the metrics, `status`, STATUS= and the
    /// amber LED); nil when the store cannot say.
    func sinkStatus() -> SinkStatus?
}

/// A sink's state for the fleet.
public struct SinkStatus: Hashable, Sendable {
    public var name: String
    /// Its figures in the store: backlog, dead letters, oldest pending age, last outcomes.
    public var outbox: OutboxStatus
    /// Deliveries under way (requests in flight, publishes waiting for their PUBACK).
    public var inFlight: Int
    /// The receiver refuses our credentials (the server's 401/403, a broker's refused
    /// login) and nothing succeeded since.
    public var credentialsRefused: Bool
    /// Whether a session with the receiver is up, for a sink that keeps one (a broker);
    /// nil for one that does not (HTTP requests).
    public var connected: Bool?

    public init(name: String, outbox: OutboxStatus, inFlight: Int, credentialsRefused: Bool, connected: Bool? = nil) {
        self.name = name
        self.outbox = outbox
        self.inFlight = inFlight
        self.credentialsRefused = credentialsRefused
        self.connected = connected
    }
}
