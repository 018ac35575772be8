import EventLoop
import Store

/// The site bus as the outbox's sink `mqtt` (docs/site-bus.md, docs/event-api.md "Sinks"):
/// while started, the bus reads the events it does not have from the store, in `sequence`
/// order, and records each PUBACK as that event delivered to the bus. Its progress is its
/// own: the server's sink goes on whatever the broker does, and the reverse.
public final class BusOutboxSink: OutboxSink, BusEventSource {
    public static let sinkName = "mqtt"
    public var name: String { Self.sinkName }

    private let store: Store
    private let loop: EventLoop
    /// Gives the bus this sink as its source of events (nil: none); the session itself is
    /// the agent's site bus driver's, not the sink's.
    private let attach: (BusOutboxSink?) -> Void
    /// Events were committed: the bus publishes them as soon as its window has room.
    private let committed: () -> Void
    private let session: () -> BusSession?
    /// A store error while reading or recording (a damaged file is the door's disk trouble).
    private let storeFailed: (StoreError) -> Void
    /// Events the broker acknowledged, as recorded.
    public var onDelivered: ((Int) -> Void)?

    public init(store: Store, loop: EventLoop, attach: @escaping (BusOutboxSink?) -> Void, committed: @escaping () -> Void,
                session: @escaping () -> BusSession?, storeFailed: @escaping (StoreError) -> Void) {
        self.store = store
        self.loop = loop
        self.attach = attach
        self.committed = committed
        self.session = session
        self.storeFailed = storeFailed
    }

    public func start() { attach(self) }
    public func stop() { attach(nil) }
    public func kick() { committed() }

    public func sinkStatus() -> SinkStatus? {
        guard let outbox = try? store.status(sink: name, nowMillis: loop.wallMilliseconds) else { return nil }
        let state = session()?.state
        var refused = false
        if case let .down(fault) = state { refused = fault == .badCredentials || fault == .notAuthorized }
        return SinkStatus(name: name, outbox: outbox, inFlight: session()?.eventsInFlight ?? 0,
                          credentialsRefused: refused, connected: state == .up)
    }

    public func events(after sequence: Int64, limit: Int) -> [BusSession.Event] {
        do {
            return try store.pendingEvents(sink: name, after: sequence, limit: limit).map { .init(sequence: $0.sequence, body: $0.body) }
        } catch {
            storeFailed(error)
            return []
        }
    }

    public func undeliverable(_ sequence: Int64, reason: String) {
        do {
            try store.record([.refused(sequence: sequence, errorClass: .client, error: reason)], sink: name, atMillis: loop.wallMilliseconds)
        } catch {
            storeFailed(error)
        }
    }

    public func delivered(_ sequences: [Int64]) {
        do {
            try store.record(sequences.map { .delivered(sequence: $0) }, sink: name, atMillis: loop.wallMilliseconds)
            onDelivered?(sequences.count)
        } catch {
            // Not recorded: the events stay pending for the bus and are published again.
            storeFailed(error)
        }
    }
}
