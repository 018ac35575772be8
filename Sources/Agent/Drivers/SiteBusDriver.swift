import AttendanceEvents
import Config
import EventLoop
import Fleet
import GatewayCore
import Journal
import SiteBus

/// The site's MQTT bus (docs/site-bus.md) while `[mqtt]` is configured: the session
/// (`BusDriver`), what the door holds retained there (status, presence per person, Home
/// Assistant discovery) and the journal's lines about it, once per change of state.
final class SiteBusDriver: AgentDriver {
    struct Hooks {
        /// The persons in force and, for those with an open visit, since when and how loud.
        var persons: () -> [Person]
        var openVisits: () -> [String: (sinceMillis: Int64, rssi: Int?)]
        /// The bus's state and figures changed (for `status`, the heartbeat, the metrics).
        var counters: (BusSnapshot?) -> Void
        /// A neighbouring door's sightings, for the door core to verify (docs/neighbours.md).
        var sighting: ([UInt8]) -> Void
    }

    private let loop: EventLoop
    var log: LogSink
    private let appVersion: String
    private let hooks: Hooks
    private var bus: BusDriver?
    private var settings: GatewayConfiguration.MQTT?
    private var gateway: GatewayConfiguration.Gateway?
    /// The persons whose presence and discovery are published, by id.
    private var published: Set<String> = []
    private var startedAtMillis: Int64 = 0
    private(set) var counters = BusSnapshot()
    /// Refusals logged, by reason, with when: at most one line per reason and minute.
    private var refusalLogged: [String: Instant] = [:]

    init(loop: EventLoop, log: LogSink, appVersion: String, hooks: Hooks) {
        self.loop = loop
        self.log = log
        self.appVersion = appVersion
        self.hooks = hooks
    }

    var isConfigured: Bool { bus != nil }

    /// The outbox's sink `mqtt` while it is started: the bus publishes its events.
    var events: (any BusEventSource)? {
        didSet { bus?.events = events }
    }

    /// The session, for the sink's figures.
    var session: BusSession? { bus?.session }

    /// Events the broker acknowledged (for `status`).
    func countDelivered(_ count: Int) {
        counters.eventsDelivered &+= UInt64(count)
        hooks.counters(counters)
    }

    func start(_ configuration: GatewayConfiguration) {
        guard let mqtt = configuration.mqtt, let site = configuration.gateway.site else { return }
        startedAtMillis = loop.wallMilliseconds
        settings = mqtt
        gateway = configuration.gateway
        let bus = BusDriver(
            loop: loop, connection: Self.connection(mqtt, gateway: configuration.gateway),
            settings: Self.sessionSettings(configuration, mqtt, site: site),
            hooks: BusDriver.Hooks(
                stateChanged: { [unowned self] state in self.stateChanged(state) },
                announce: { [unowned self] announcement in self.announce(announcement) },
                sighting: { [unowned self] _, payload in self.hooks.sighting(payload) },
                refused: { [unowned self] refusal in self.refused(refusal) },
                published: { [unowned self] kind, accepted in
                    self.counters.count(topicKind: kind.rawValue, accepted: accepted)
                    self.hooks.counters(self.counters)
                }
            ),
            seed: UInt64.random(in: .min ... .max)
        )
        self.bus = bus
        bus.events = events
        counters = BusSnapshot(state: "connecting")
        hooks.counters(counters)
        log.log(.info, "site bus", ["url": mqtt.url.description, "topics": "\(mqtt.topicPrefix)/\(site)/\(configuration.gateway.id)"])
        publishPersons(configuration.persons)
        bus.start()
    }

    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {
        guard let mqtt = configuration.mqtt, let site = configuration.gateway.site else {
            if bus != nil {
                stop()
                log.log(.notice, "site bus off: [mqtt] removed")
            }
            return
        }
        guard let bus else {
            start(configuration)
            return
        }
        // (Neighbours switched on or off change the subscriptions: a new session too.)
        let topicsChanged = mqtt.topicPrefix != settings?.topicPrefix || mqtt.discoveryPrefix != settings?.discoveryPrefix
            || site != gateway?.site || (configuration.site?.hasNeighbours ?? false) != (previous.site?.hasNeighbours ?? false)
        if topicsChanged {
            // A new session under the new topics; what the old ones hold retained stays
            // there (docs/site-bus.md says how to clear it).
            stop()
            start(configuration)
            return
        }
        settings = mqtt
        gateway = configuration.gateway
        bus.reconfigure(connection: Self.connection(mqtt, gateway: configuration.gateway),
                        settings: Self.sessionSettings(configuration, mqtt, site: site))
        publishPersons(configuration.persons)
    }

    func stop() {
        bus?.stop()
        bus = nil
        published = []
        counters.state = "off"
        hooks.counters(nil)
    }

    // MARK: What the door tells the bus

    /// This door's sightings for its neighbours (SPEC §17).
    func publishSighting(_ payload: [UInt8]) {
        guard let bus, !bus.publishSighting(payload) else { return }
        counters.sightingsNotSent &+= 1
        hooks.counters(counters)
    }

    /// Events were committed (the outbox's sink `mqtt` was kicked): published from the outbox.
    func eventsCommitted() {
        bus?.eventsCommitted()
    }

    /// An event was committed: presence follows (the event itself goes through the sink).
    func eventCommitted(_ event: AttendanceEvent) {
        guard let bus, let settings else { return }
        guard settings.presence, published.contains(event.userId), let topics = topics else { return }
        let present = event.type == .checkin
        let since = present ? event.visitStartMilliseconds : event.timestampMilliseconds
        bus.setRetained(topics.presence(event.userId),
                        payload: BusPayloads.presence(present: present, since: ISO8601Timestamp.format(millisecondsSinceEpoch: since),
                                                      rssi: event.rssiSeries.last),
                        kind: .presence)
    }

    /// Presence was restored after a restart (visits open again, without their events).
    func presenceRestored() {
        guard bus != nil else { return }
        publishPersons(hooks.persons())
    }

    // MARK: Steps

    private var topics: BusTopics? {
        guard let settings, let gateway, let site = gateway.site else { return nil }
        return BusTopics(prefix: settings.topicPrefix, site: site, gateway: gateway.id, discoveryPrefix: settings.discoveryPrefix)
    }

    /// Discovery and presence for every person in force; persons gone have theirs cleared.
    private func publishPersons(_ persons: [Person]) {
        guard let bus, let settings, let gateway, let topics else { return }
        let device = BusPayloads.Device(gatewayId: gateway.id, name: gateway.door ?? gateway.id, swVersion: appVersion)
        let visits = hooks.openVisits()
        var now: Set<String> = []
        for person in persons {
            now.insert(person.id)
            if settings.homeAssistant {
                bus.setRetained(topics.discovery(person.id),
                                payload: BusPayloads.discovery(person: person.id, personName: person.name, topics: topics, device: device),
                                kind: .discovery)
            } else {
                bus.setRetained(topics.discovery(person.id), payload: nil, kind: .discovery)
            }
            if settings.presence {
                let visit = visits[person.id]
                let since = ISO8601Timestamp.format(millisecondsSinceEpoch: visit?.sinceMillis ?? startedAtMillis)
                bus.setRetained(topics.presence(person.id),
                                payload: BusPayloads.presence(present: visit != nil, since: since, rssi: visit?.rssi),
                                kind: .presence)
            } else {
                bus.setRetained(topics.presence(person.id), payload: nil, kind: .presence)
            }
        }
        for gone in published.subtracting(now) {
            bus.setRetained(topics.presence(gone), payload: nil, kind: .presence)
            bus.setRetained(topics.discovery(gone), payload: nil, kind: .discovery)
        }
        published = now
    }

    private func stateChanged(_ state: BusSession.BusState) {
        switch state {
        case .connecting:
            counters.state = counters.state == "up" ? "down" : (counters.state == "off" ? "connecting" : counters.state)
        case .up:
            counters.state = "up"
            counters.error = nil
            counters.connects &+= 1
        case let .down(fault):
            counters.state = "down"
            counters.error = fault.description
        case .stopped:
            return
        }
        hooks.counters(counters)
    }

    /// The journal's lines about the session, as the session decides them: once per change.
    private func announce(_ announcement: BusSession.BusAnnouncement) {
        switch announcement {
        case let .up(sessionPresent):
            log.log(.notice, "site bus up", ["url": settings?.url.description ?? "", "session_present": sessionPresent ? "yes" : "no"])
        case let .down(fault):
            log.log(fault.needsOperator ? .error : .warning, "site bus down", ["error": fault.description, "kind": fault.kind])
        case let .flapping(fault):
            log.log(.warning, "site bus flapping: the session drops soon after each connection; quiet until it stays up",
                    ["error": fault.description, "kind": fault.kind, "connects": "\(counters.connects)"])
        }
    }

    private func refused(_ refusal: BusRefusal) {
        counters.refused[refusal.reason, default: 0] &+= 1
        if refusal == .oversizedSighting { counters.sightingsOversized &+= 1 }
        hooks.counters(counters)
        let now = loop.now
        if let last = refusalLogged[refusal.reason], now < last + .seconds(60) { return }
        refusalLogged[refusal.reason] = now
        log.log(.warning, "site bus: refused", ["reason": refusal.reason, "what": refusal.description,
                                                 "count": "\(counters.refused[refusal.reason] ?? 0)"])
    }

    private static func connection(_ mqtt: GatewayConfiguration.MQTT, gateway: GatewayConfiguration.Gateway) -> BusDriver.Connection {
        BusDriver.Connection(host: mqtt.url.host, port: mqtt.url.port, usesTLS: mqtt.url.usesTLS, caFile: mqtt.caFile,
                             clientId: gateway.id, username: mqtt.username, password: mqtt.password)
    }

    private static func sessionSettings(_ configuration: GatewayConfiguration, _ mqtt: GatewayConfiguration.MQTT,
                                        site: String) -> BusSession.Settings {
        var settings = BusSession.Settings(
            topics: BusTopics(prefix: mqtt.topicPrefix, site: site, gateway: configuration.gateway.id, discoveryPrefix: mqtt.discoveryPrefix),
            events: mqtt.events, homeAssistant: mqtt.homeAssistant
        )
        settings.sightings = configuration.site?.hasNeighbours ?? false
        return settings
    }
}
