import Config
import Forwarder
import Store

/// The HTTP server as the outbox's sink `server` (SPEC §7): the `Forwarder`, made from
/// `[server]`. What it does is told to `onEvent` (then logged) and `onDelivered`.
struct ServerSinkWiring: SinkWiring {
    let appVersion: String
    let onEvent: (ForwarderEvent) -> Void
    let onDelivered: (_ createdAtMillis: Int64, _ deliveredAtMillis: Int64) -> Void

    var name: String { Store.serverSink }

    func isConfigured(_ configuration: GatewayConfiguration) -> Bool { configuration.server != nil }

    func make(_ configuration: GatewayConfiguration, context: SinkContext) throws -> any OutboxSink {
        guard let server = configuration.server else { throw SinkWiringError.notConfigured(name) }
        let log = context.log
        let forwarder = try Forwarder(
            store: context.store, loop: context.loop,
            configuration: ForwarderConfiguration(server: server, gateway: configuration.gateway, appVersion: appVersion),
            onEvent: { [onEvent] event in
                onEvent(event)
                event.log(to: log())
            }
        )
        forwarder.onDelivered = onDelivered
        log().log(.info, "forwarding events", ["url": server.displayURL])
        return forwarder
    }

    func reload(_ sink: any OutboxSink, _ configuration: GatewayConfiguration) throws {
        guard let server = configuration.server, let forwarder = sink as? Forwarder else { return }
        try forwarder.reload(ForwarderConfiguration(server: server, gateway: configuration.gateway, appVersion: appVersion))
    }
}

enum SinkWiringError: Error, CustomStringConvertible {
    case notConfigured(String)

    var description: String {
        switch self {
        case let .notConfigured(name): "the configuration has no sink \(name)"
        }
    }
}
