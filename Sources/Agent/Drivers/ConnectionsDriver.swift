import Config
import HostDrivers
import Journal
import PresenceProof

/// Connections and proofs (HostDrivers' `ProofDrivers`: docs/proof-protocol.md,
/// docs/persistent-connect.md) as one of the agent's drivers, built only when a tag needs a
/// connection: at start, or at the reload that first configures one. What to connect and
/// prove is the door core's (`GatewayAgent+Perform`); what the controller reports reaches
/// them through the fan-out. The connect scheduler's lines go to its log.
final class ConnectionsDriver: AgentDriver {
    let proofs: ProofDrivers
    var log: LogSink

    init(proofs: ProofDrivers, log: LogSink) {
        self.proofs = proofs
        self.log = log
        proofs.connect.onLog = { [unowned self] message in self.log.log(.info, message) }
    }

    /// Built on the link, they start from the controller's state and connect when the door
    /// core asks; the proofs take their time limit.
    func start(_ configuration: GatewayConfiguration) {
        proofs.runner.timeLimit = ProofTimeLimit(bound: configuration.presence.proofResponseLimit)
    }

    /// The proof time limit (`[presence] proof_response_s`) applies to the next handshake;
    /// the connect settings (`[bluetooth]`) apply on restart; which tags want a connection
    /// is the door core's reload.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {
        proofs.runner.timeLimit = ProofTimeLimit(bound: configuration.presence.proofResponseLimit)
    }

    /// Nothing: the controller, stopped after them, is closed and their connections end
    /// with it.
    func stop() {}
}
