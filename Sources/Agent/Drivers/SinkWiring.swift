import Config
import EventLoop
import Journal
import Store

/// What a sink is made with besides its settings.
struct SinkContext {
    let store: Store
    let loop: EventLoop
    /// Delivery's log as it is now: read at each line, so a new log level reaches the sink.
    let log: () -> LogSink
}

/// How the agent makes one kind of outbox sink from the configuration (docs/event-api.md,
/// "Sinks"): the one place where a sink's settings meet `GatewayConfiguration`, which the
/// sink's own target does not know. A new sink is a target with a type conforming to
/// `OutboxSink`, and one wiring listed in `GatewayAgent.delivery`.
protocol SinkWiring {
    /// The sink's name in the store (`OutboxSink.name`).
    var name: String { get }

    /// Whether the configuration has this sink (its section is there), whether or not it
    /// can be built: a configured sink holds its events in the outbox either way.
    func isConfigured(_ configuration: GatewayConfiguration) -> Bool

    /// The sink for this configuration, not started. What keeps it from being built is
    /// thrown (and logged by the caller; its events stay in the outbox).
    func make(_ configuration: GatewayConfiguration, context: SinkContext) throws -> any OutboxSink

    /// New settings for a running sink this wiring made (SIGHUP).
    func reload(_ sink: any OutboxSink, _ configuration: GatewayConfiguration) throws
}
