#if canImport(Glibc)
import Glibc
#endif
import Config
import EventLoop
import GatewayCore
import Journal
import PresenceProof
import SiteBus

/// For `scan` and `calibrate` (docs/cli.md): the neighbouring doors' sightings, read from
/// the site bus while the command runs, so an installer sees beside this door's RSSI what
/// each neighbour hears of the same person. A reader only: its own client id (never the
/// door's, so a running agent keeps its session), no status, no will, nothing published
/// (`BusSession.Settings.listenOnly`). A bus that cannot be reached is said once, and the
/// command goes on without the neighbours.
final class NeighbourListener {
    private let loop: EventLoop
    private let command: String
    private var bus: BusDriver?
    private(set) var heard: NeighbourSightingsHeard
    private var saidDown = false
    /// Each sighting of a configured person, as it is taken.
    var onSighting: ((String, NeighbourSightingsHeard.Heard) -> Void)?
    /// The session came up (true) or went down.
    var onState: ((Bool) -> Void)?

    /// nil when the configuration has no `[mqtt]` or no `[site]` neighbours (or no master
    /// key to check their signatures with).
    init?(configuration: GatewayConfiguration, loop: EventLoop, command: String) {
        guard let mqtt = configuration.mqtt, let site = configuration.gateway.site,
              let neighbours = configuration.site, neighbours.hasNeighbours,
              let key = configuration.security.masterKey.flatMap(MasterKey.init(bytes:)) else { return nil }
        self.loop = loop
        self.command = command
        let gateway = configuration.gateway.id
        heard = NeighbourSightingsHeard(keys: SightingKeys(masterKey: key), ownId: gateway,
                                        neighbours: neighbours.neighbours, personIds: configuration.persons.map(\.id))
        var settings = BusSession.Settings(
            topics: BusTopics(prefix: mqtt.topicPrefix, site: site, gateway: gateway, discoveryPrefix: mqtt.discoveryPrefix),
            events: false, homeAssistant: false
        )
        settings.sightings = true
        settings.listenOnly = true
        let connection = BusDriver.Connection(
            host: mqtt.url.host, port: mqtt.url.port, usesTLS: mqtt.url.usesTLS, caFile: mqtt.caFile,
            clientId: Self.clientId(gateway: gateway, command: command), username: mqtt.username, password: mqtt.password
        )
        bus = BusDriver(
            loop: loop, connection: connection, settings: settings,
            hooks: BusDriver.Hooks(
                stateChanged: { [unowned self] state in self.stateChanged(state) },
                announce: { _ in },
                sighting: { [unowned self] _, payload in self.take(payload) },
                refused: { _ in },
                published: { _, _ in }
            ),
            seed: UInt64.random(in: .min ... .max)
        )
    }

    /// Never the door's own client id (the broker would drop the running agent's session):
    /// `G-scan-PID`.
    static func clientId(gateway: String, command: String) -> String {
        "\(gateway)-\(command)-\(getpid())"
    }

    private(set) var isUp = false

    func start() {
        printError("\(command): reading the neighbours' sightings from the site bus")
        bus?.start()
    }

    func stop() {
        bus?.stop()
        bus = nil
    }

    private func take(_ payload: [UInt8]) {
        guard case let .success(named) = heard.take(payload, wallNow: loop.wallMilliseconds) else { return }
        for (person, sighting) in named { onSighting?(person, sighting) }
    }

    private func stateChanged(_ state: BusSession.BusState) {
        switch state {
        case .up:
            isUp = true
            onState?(true)
            if saidDown { printError("\(command): the site bus is up: the neighbours' column is back") }
            saidDown = false
        case let .down(fault):
            isUp = false
            onState?(false)
            guard !saidDown else { return }
            saidDown = true
            printError("\(command): the site bus cannot be reached (\(fault.description)): going on without the neighbours")
        case .connecting, .stopped:
            break
        }
    }
}
