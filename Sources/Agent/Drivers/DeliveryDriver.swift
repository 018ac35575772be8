import Config
import EventLoop
import Forwarder
import Journal
import Store

/// Delivery of the outbox to the server (docs/event-api.md): the forwarder while there is
/// a `[server]` and a store to read, started, reloaded, stopped and kicked here. What
/// delivery does is told to `onEvent` (then logged here) and `onDelivered`.
final class DeliveryDriver: AgentDriver {
    private let loop: EventLoop
    var log: LogSink
    private let appVersion: String
    private let onEvent: (ForwarderEvent) -> Void
    private let onDelivered: (_ createdAtMillis: Int64, _ deliveredAtMillis: Int64) -> Void
    /// The store while one is open: what delivery reads.
    private let store: () -> Store?
    private var forwarder: Forwarder?

    init(loop: EventLoop, log: LogSink, appVersion: String, store: @escaping () -> Store?,
         onEvent: @escaping (ForwarderEvent) -> Void,
         onDelivered: @escaping (_ createdAtMillis: Int64, _ deliveredAtMillis: Int64) -> Void) {
        self.loop = loop
        self.log = log
        self.appVersion = appVersion
        self.store = store
        self.onEvent = onEvent
        self.onDelivered = onDelivered
    }

    /// Starts delivering what the store holds to the configured server; without a
    /// `[server]` events are stored and logged only; without a store (not open yet)
    /// delivery starts when it opens.
    func start(_ configuration: GatewayConfiguration) {
        guard let server = configuration.server else {
            log.log(.notice, "no [server]: events are stored and logged only")
            return
        }
        guard let store = store() else { return }
        do {
            let forwarder = try Forwarder(
                store: store, loop: loop,
                configuration: ForwarderConfiguration(server: server, gateway: configuration.gateway, appVersion: appVersion),
                onEvent: { [unowned self] event in
                    self.onEvent(event)
                    event.log(to: self.log)
                }
            )
            forwarder.onDelivered = onDelivered
            forwarder.start()
            self.forwarder = forwarder
            log.log(.info, "forwarding events", ["url": server.displayURL])
        } catch {
            // The events stay in the outbox; a fixed configuration and SIGHUP start delivery.
            log.log(.error, "cannot forward events; they are kept in the outbox", ["error": "\(error)"])
        }
    }

    /// SIGHUP: new settings; `[server]` removed stops delivery, added starts it (with a store).
    func reload(_ fresh: GatewayConfiguration, previous: GatewayConfiguration) {
        guard let server = fresh.server else {
            stop()
            return
        }
        guard let forwarder else {
            start(fresh)
            return
        }
        do {
            try forwarder.reload(ForwarderConfiguration(server: server, gateway: fresh.gateway, appVersion: appVersion))
        } catch {
            log.log(.error, "forwarder settings not reloaded", ["error": "\(error)"])
        }
    }

    /// Stops delivery (at the stop, or while the store it reads is reopened).
    func stop() {
        forwarder?.stop()
        forwarder = nil
    }

    /// Events were committed: delivery starts now rather than at its next wake-up.
    func kick() {
        forwarder?.kick()
    }

    /// The backlog and the amber LED's state as delivery sees them; nil when not delivering
    /// or when the store cannot say.
    func status() -> ForwarderStatus? {
        try? forwarder?.status()
    }
}
