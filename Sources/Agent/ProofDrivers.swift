import HostDrivers

/// The connection and proof drivers of the door agent (see docs/proof-protocol.md,
/// docs/persistent-connect.md). What they do is the core's decision (`DoorCore+Proof`):
/// they only report what happened on the air.
final class ProofDrivers {
    let connect: ConnectSchedulerDriver
    let dataPath: DataPathDriver
    let runner: ProofRunner

    init(connect: ConnectSchedulerDriver, dataPath: DataPathDriver, runner: ProofRunner) {
        self.connect = connect
        self.dataPath = dataPath
        self.runner = runner
    }
}
