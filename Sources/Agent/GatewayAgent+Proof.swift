import Config
import EventLoop
import GatewayCore
import HCI
import Host
import HostDrivers

extension GatewayAgent {
    /// The tags that may need a connection, from the configuration. A `require_proof`
    /// tag without a key (none of its own, no master key) cannot prove: it has no key here
    /// and is only connected to if it is tracked by its connection.
    static func connectionTags(_ configuration: GatewayConfiguration) -> [Int: DoorConnectionTag] {
        var result: [Int: DoorConnectionTag] = [:]
        var index = 0
        for person in configuration.persons {
            for tag in person.tags {
                defer { index += 1 }
                let tracked = tag.track == .connection
                guard person.requireProof || tracked else { continue }
                result[index] = DoorConnectionTag(tagId: tag.id, personId: person.id, requireProof: person.requireProof,
                                                  tracked: tracked, key: configuration.proofKey(for: tag),
                                                  configuredPeer: tag.configuredConnectPeer)
            }
        }
        return result
    }

    /// Builds connections and proofs on the link, before it starts (or at a reload, on the
    /// data path an enrolment window may have made already); the caller starts them with
    /// the other drivers.
    func startProofs(_ link: ControllerDriver) {
        guard core.needsConnections else { return }
        let b = configuration.bluetooth
        let proofs = ProofDrivers(
            link: link,
            configuration: b.connectScheduling(),
            activeScanning: b.scan == .active,
            dataPath: enrolment?.dataPath
        )
        connections = ConnectionsDriver(proofs: proofs, log: log)
        hearDataPath(proofs.dataPath)
        let connect = proofs.connect
        connect.onConnected = { [unowned self] tagIndex, handle, now in
            self.perform(self.core.connected(tagIndex: tagIndex, handle: handle, at: now))
        }
        connect.onConnectionLost = { [unowned self] tagIndex, _, reason, now in
            self.perform(self.core.connectionLost(tagIndex: tagIndex, reason: "\(reason)", at: now))
        }
        connect.onRSSI = { [unowned self] tagIndex, _, rssi, now in
            self.perform(self.core.connectionRSSI(tagIndex: tagIndex, rssi: rssi, at: now))
        }
        proofs.runner.onFinished = { [unowned self] outcome, now in self.perform(self.core.proofFinished(outcome, at: now)) }
        log.log(.info, "connections", ["tags": "\(core.connectionTagCount)", "mode": b.connectMode.rawValue,
                                       "max_connections": "\(b.maxConnections)"])
    }
}
