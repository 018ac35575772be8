import Advertisements
import AttendanceEvents
import Config
import GatewayCore
import HCITransport
import Journal
import PresenceProof
import Store

/// Why the agent could not start.
public enum AgentError: Error, CustomStringConvertible {
    case stateDirectory(String, errno: Int32)
    case store(String, StoreError)

    public var description: String {
        switch self {
        case let .stateDirectory(path, code):
            "cannot create the state directory \(path) (errno \(code)): create it or set [gateway] state_dir"
        case let .store(path, error):
            "cannot open the outbox \(path): \(error)"
        }
    }
}

extension GatewayAgent {
    /// What the door core is configured with. The matcher's tags and the engine's persons
    /// come from the configuration; a tag's index in `tags` is the index the matcher
    /// reports and the engine keys samples by.
    static func doorSetup(_ configuration: GatewayConfiguration, appVersion: String) -> DoorSetup {
        var tags: [ConfiguredTag] = []
        var persons: [PresencePerson] = []
        for person in configuration.persons {
            var presenceTags: [PresenceTag] = []
            for tag in person.tags {
                presenceTags.append(PresenceTag(index: tags.count, id: tag.id))
                tags.append(ConfiguredTag(tagId: tag.id, personId: person.id, identities: tag.identities))
            }
            persons.append(PresencePerson(id: person.id, requireProof: person.requireProof, tags: presenceTags))
        }
        let g = configuration.gateway
        return DoorSetup(gateway: GatewayIdentity(id: g.id, site: g.site, door: g.door), appVersion: appVersion,
                         settings: configuration.presence, persons: persons, tags: tags, connectionTags: connectionTags(configuration),
                         neighbours: neighbourSetup(configuration))
    }

    /// `[site]` as the door core takes it (docs/neighbours.md), the sightings' keys derived
    /// from the site master key; nil without neighbours (the configuration makes sure a
    /// door with neighbours has the key).
    static func neighbourSetup(_ configuration: GatewayConfiguration) -> NeighbourSetup? {
        guard let site = configuration.site, site.hasNeighbours,
              let key = configuration.security.masterKey.flatMap(MasterKey.init(bytes:)) else { return nil }
        return NeighbourSetup(neighbours: site.neighbours, marginDB: site.marginDB, handover: site.handover,
                              keys: SightingKeys(masterKey: key))
    }

    /// Errors retrying cannot fix. A missing adapter is retried: a USB dongle may be
    /// plugged in later, and systemd would only restart us into the same state.
    static func isPermanent(_ error: TransportError, replay: Bool) -> Bool {
        switch error {
        case .bluetoothUnsupported, .permissionDenied, .unsupportedBaudRate,
             .serialFlowControlUnsupported, .replayFile, .corruptReplayFile, .captureFile:
            return true
        default:
            return replay
        }
    }
}

extension Severity {
    init(_ level: GatewayConfiguration.LogLevel) {
        switch level {
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        }
    }
}
