import Config
import EventLoop
import HCI
import HCITransport
import Host
import HostDrivers
import Journal

/// The controller `scan`, `calibrate` and `prove` talk to: the transport a spec names,
/// opened through one `ControllerLink` on the command's event loop, and the run every such
/// command makes of it — stop on SIGINT/SIGTERM or after a time limit, then stop the link
/// and wait until the adapter is handed back. The commands only add what they do with
/// the reports.
final class ControllerSession {
    let loop: EventLoop
    let spec: TransportSpec
    let transport: any HCITransport
    let link: ControllerLink

    /// Opens nothing yet: the link opens the transport when `run` starts it.
    /// - Parameters:
    ///   - capturePath: `--capture FILE`: every packet both ways is written there.
    ///   - isPermanent: transport errors not worth reopening for; the link gives up on them.
    init(loop: EventLoop, spec: TransportSpec, capturePath: String? = nil, scan: ScanSettings,
         isPermanent: @escaping (TransportError) -> Bool) throws(TransportError) {
        self.loop = loop
        self.spec = spec
        transport = try makeTransport(spec, capturePath: capturePath)
        link = ControllerLink(loop: loop, transport: transport, configuration: HostConfiguration(scan: scan),
                              isPermanent: isPermanent)
    }

    /// Starts the link and runs the loop until something stops it: SIGINT, SIGTERM, `limit`
    /// running out, or the command itself. Returns only once the adapter is handed back;
    /// the result says why the run failed, if it did (the signals could not be handled, or
    /// the loop broke).
    func run(limit: Duration?, log: LogSink) -> String? {
        do {
            try loop.onSignal(.interrupt) { [unowned self] in self.loop.stop() }
            try loop.onSignal(.terminate) { [unowned self] in self.loop.stop() }
        } catch {
            return "cannot handle signals: \(error)"
        }
        if let limit {
            _ = loop.schedule(after: limit) { [unowned self] in self.loop.stop() }
        }
        link.start()
        var failure: String?
        do {
            try loop.run()
        } catch {
            failure = "event loop failed: \(error)"
        }
        link.stop()
        link.waitForHandBack(log: log)
        loop.stopHandlingSignals()
        return failure
    }

    /// `[bluetooth]` as the host scans: `--active` and `--duty` override the configuration,
    /// and without one the host's defaults hold.
    static func scanSettings(configuration: GatewayConfiguration?, active: Bool = false, duty: Double? = nil) -> ScanSettings {
        let bluetooth = configuration?.bluetooth
        let mode: ScanSettings.Mode = active || bluetooth?.scan == .active ? .active : .passive
        return ScanSettings(
            mode: mode,
            tagIntervalMs: bluetooth?.tagIntervalMilliseconds ?? ScanSettings().tagIntervalMs,
            dutyOverride: duty ?? bluetooth?.scanDuty
        )
    }
}
