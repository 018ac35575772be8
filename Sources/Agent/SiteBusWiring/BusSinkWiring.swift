import Config
import SiteBus
import Store

/// The site's broker as the outbox's sink `mqtt` (docs/site-bus.md): configured with
/// `[mqtt] events = true`. The sink reads and records the bus's own progress; the session
/// it publishes on is the site bus driver's.
struct BusSinkWiring: SinkWiring {
    let siteBus: () -> SiteBusDriver
    let storeFailed: (StoreError) -> Void

    var name: String { BusOutboxSink.sinkName }

    func isConfigured(_ configuration: GatewayConfiguration) -> Bool { configuration.mqtt?.events == true }

    func make(_ configuration: GatewayConfiguration, context: SinkContext) throws -> any OutboxSink {
        let driver = siteBus()
        let sink = BusOutboxSink(
            store: context.store, loop: context.loop,
            attach: { [weak driver] sink in driver?.events = sink },
            committed: { [weak driver] in driver?.eventsCommitted() },
            session: { [weak driver] in driver?.session },
            storeFailed: storeFailed
        )
        sink.onDelivered = { [weak driver] count in driver?.countDelivered(count) }
        return sink
    }

    /// The session follows `[mqtt]` through the site bus driver's own reload.
    func reload(_ sink: any OutboxSink, _ configuration: GatewayConfiguration) throws {}
}
