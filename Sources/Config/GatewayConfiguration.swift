import GatewayCore
import LEDs

/// The validated contents of `gateway.toml` (see docs/configuration.md), defaults filled in.
///
/// Built by ``GatewayConfiguration/load(path:fileSystem:)`` or
/// ``GatewayConfiguration/parse(text:file:fileSystem:)``, which check every value, so code
/// that receives one can rely on the ranges documented on each property.
///
/// Secrets (master key, tag keys, IRKs, the server token) are kept as bytes and never
/// appear in `description`, `debugDescription`, `dump` or ``renderEffective()``.
public struct GatewayConfiguration: Hashable, Sendable {
    public var gateway: Gateway
    public var bluetooth: Bluetooth
    public var presence: Presence
    /// Without `[server]` events are only stored and logged (see docs/event-api.md).
    public var server: Server?
    public var security: Security
    /// Without `[leds]` no GPIO is touched (see docs/leds.md).
    public var leds: LEDs?
    /// The gateway as the door's own beacon; `nil` means it does not advertise.
    public var advertise: Advertise?
    /// In file order; ids are unique, and tag ids are unique across all persons.
    public var persons: [Person]
    /// `[metrics]`; nil when the section is absent (see docs/fleet.md).
    public var metrics: Metrics?
    /// `[mqtt]`, the site's bus; nil when the section is absent (see docs/site-bus.md).
    public var mqtt: MQTT?
    /// `[site]`, the neighbouring doors; nil when the section is absent (see docs/neighbours.md).
    public var site: Site?

    public init(
        gateway: Gateway, bluetooth: Bluetooth = .init(), presence: Presence = .init(),
        server: Server? = nil, security: Security = .init(), leds: LEDs? = nil,
        advertise: Advertise? = nil, persons: [Person] = [], metrics: Metrics? = nil,
        mqtt: MQTT? = nil, site: Site? = nil
    ) {
        self.gateway = gateway
        self.bluetooth = bluetooth
        self.presence = presence
        self.server = server
        self.security = security
        self.leds = leds
        self.advertise = advertise
        self.persons = persons
        self.metrics = metrics
        self.mqtt = mqtt
        self.site = site
    }

    /// Where the service looks when no `--config` is given.
    public static let defaultPath = "/etc/beacon-gateway/gateway.toml"
}
