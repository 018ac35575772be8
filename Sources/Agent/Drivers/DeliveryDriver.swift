import Config
import EventLoop
import Forwarder
import Journal
import Store

/// Delivery of the outbox to its sinks (docs/event-api.md, "Sinks"): one `OutboxSink` per
/// sink the configuration has (the HTTP server today), made by the wirings the agent lists,
/// started, reloaded, stopped and kicked here together, each on its own: one sink down
/// holds no other back. The store is told which sinks are configured at every start and
/// reload, so that retention and the cap follow them.
final class DeliveryDriver: AgentDriver {
    private let loop: EventLoop
    var log: LogSink
    /// The store while one is open: what delivery reads.
    private let store: () -> Store?
    /// Every kind of sink the agent knows, in the order they start.
    private let wirings: [any SinkWiring]
    /// The sinks running now, by name.
    private var sinks: [String: any OutboxSink] = [:]

    init(loop: EventLoop, log: LogSink, store: @escaping () -> Store?, sinks wirings: [any SinkWiring]) {
        self.loop = loop
        self.log = log
        self.store = store
        self.wirings = wirings
    }

    /// The sinks `configuration` has, whether they run or not.
    func configuredSinks(_ configuration: GatewayConfiguration) -> [String] {
        wirings.filter { $0.isConfigured(configuration) }.map(\.name)
    }

    /// Starts delivering what the store holds to every configured sink; without one,
    /// events are stored and logged only; without a store (not open yet) delivery starts
    /// when it opens.
    func start(_ configuration: GatewayConfiguration) {
        if configuredSinks(configuration).isEmpty {
            log.log(.notice, "no [server]: events are stored and logged only")
        }
        guard let store = store() else { return }
        tellStore(store, configuration)
        for wiring in wirings where wiring.isConfigured(configuration) && sinks[wiring.name] == nil {
            startSink(wiring, configuration, store: store)
        }
    }

    /// SIGHUP: new settings; a sink removed from the configuration stops, one added starts
    /// (with a store), the others take their new settings.
    func reload(_ fresh: GatewayConfiguration, previous: GatewayConfiguration) {
        guard let store = store() else { return }
        tellStore(store, fresh)
        for wiring in wirings {
            let running = sinks[wiring.name]
            switch (wiring.isConfigured(fresh), running) {
            case (false, let sink?):
                sink.stop()
                sinks[wiring.name] = nil
            case (true, nil):
                startSink(wiring, fresh, store: store)
            case (true, let sink?):
                do {
                    try wiring.reload(sink, fresh)
                } catch {
                    log.log(.error, "sink settings not reloaded", ["sink": wiring.name, "error": "\(error)"])
                }
            case (false, nil):
                break
            }
        }
    }

    /// Stops every sink (at the stop, or while the store they read is reopened).
    func stop() {
        for wiring in wirings.reversed() { sinks[wiring.name]?.stop() }
        sinks = [:]
    }

    /// Events were committed: every sink looks for work now rather than at its next wake-up.
    func kick() {
        for wiring in wirings { sinks[wiring.name]?.kick() }
    }

    /// Each running sink's state, in the wirings' order.
    func sinkStatuses() -> [SinkStatus] {
        wirings.compactMap { sinks[$0.name]?.sinkStatus() }
    }

    /// The whole delivery as the amber LED and `STATUS=` see it: the outbox's figures
    /// (`Store.status(nowMillis:)`: the sink furthest behind) and whether any running sink
    /// is refused for its credentials; nil when no sink runs or the store cannot say.
    func status() -> ForwarderStatus? {
        guard !sinks.isEmpty, let store = store(), let outbox = try? store.status(nowMillis: loop.wallMilliseconds) else { return nil }
        let statuses = sinkStatuses()
        return ForwarderStatus(outbox: outbox, inFlight: statuses.reduce(0) { $0 + $1.inFlight },
                               authRefused: statuses.contains(where: \.credentialsRefused))
    }

    private func tellStore(_ store: Store, _ configuration: GatewayConfiguration) {
        do {
            let changes = try store.configureSinks(configuredSinks(configuration), nowMillis: loop.wallMilliseconds)
            if !changes.isEmpty {
                log.log(.notice, "outbox sinks changed", [
                    "added": changes.added.joined(separator: ","), "removed": changes.removed.joined(separator: ","),
                ])
            }
        } catch {
            // The store keeps the sinks it had: retention keeps more, never less.
            log.log(.error, "cannot tell the outbox its sinks", ["error": "\(error)"])
        }
    }

    private func startSink(_ wiring: any SinkWiring, _ configuration: GatewayConfiguration, store: Store) {
        do {
            let sink = try wiring.make(configuration, context: SinkContext(store: store, loop: loop, log: { [unowned self] in self.log }))
            sink.start()
            sinks[wiring.name] = sink
        } catch {
            // The events stay in the outbox; a fixed configuration and SIGHUP start delivery.
            log.log(.error, "cannot deliver events to a sink; they are kept in the outbox", ["sink": wiring.name, "error": "\(error)"])
        }
    }
}
