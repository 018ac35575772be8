import Config
import HostDrivers
import Journal

/// The controller's link (HostDrivers' `ControllerDriver`, opened by `ControllerSession`)
/// as one of the agent's drivers: started once everything that hears it is built and
/// wired (the fan-out, the door beacon, connections), stopped after everything that
/// submits commands on it, its hand-back waited for once what must survive is written.
/// Its lines (the host's `HostLogEvent`s) go to its log.
final class ControllerLinkDriver: AgentDriver {
    let link: ControllerDriver
    var log: LogSink

    init(link: ControllerDriver, log: LogSink) {
        self.link = link
        self.log = log
        link.onLog = { [unowned self] event in self.log.log(event) }
    }

    func start(_ configuration: GatewayConfiguration) {
        link.start()
    }

    /// Nothing: `[bluetooth]` (the transport, scanning) applies on restart.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {}

    /// Starts giving the controller back (for `hciN`, the kernel resets it), so that the
    /// close overlaps with what the store writes at its stop.
    func stop() {
        link.stop()
    }

    /// Waits for the hand-back, at most `ControllerDriver.handBackTimeout`.
    func close() {
        link.waitForHandBack(log: log)
    }
}
