import EventLoop
import HCI
import HCITransport
import Host
import Journal

/// The controller a command talks to: the transport a spec names, opened through one
/// `ControllerDriver` on the command's event loop. Every command that drives a controller
/// (`run`, `scan`, `calibrate`, `prove`) builds it here. `scan`, `calibrate` and `prove`
/// also use its `run`: stop on SIGINT/SIGTERM or after a time limit, then stop the link
/// and wait until the adapter is handed back; `run` has signals and a shutdown of its own.
public final class ControllerSession {
    public let loop: EventLoop
    public let spec: TransportSpec
    public let transport: any HCITransport
    public let link: ControllerDriver

    /// Opens nothing yet: the link opens the transport when it is started (`run`, or the
    /// agent's `link.start()`).
    /// - Parameters:
    ///   - capturePath: `--capture FILE`: every packet both ways is written there.
    ///   - captureKeys: `--capture-keys`: keys in it as they are, not zeroed.
    ///   - staticRandomAddress: set at bring-up on a controller without a usable public
    ///     address (`HostConfiguration.staticRandomAddress`).
    ///   - isPermanent: transport errors not worth reopening for; the link gives up on them.
    public convenience init(loop: EventLoop, spec: TransportSpec, capturePath: String? = nil, captureKeys: Bool = false,
                            scan: ScanSettings, staticRandomAddress: BluetoothAddress? = nil,
                            isPermanent: @escaping (TransportError) -> Bool) throws(TransportError) {
        self.init(loop: loop, spec: spec, transport: try makeTransport(spec, capturePath: capturePath, captureKeys: captureKeys), scan: scan,
                  staticRandomAddress: staticRandomAddress, isPermanent: isPermanent)
    }

    /// On a transport made elsewhere (a test's controller in memory); `spec` is what the
    /// logs and the read gathering go by.
    public init(loop: EventLoop, spec: TransportSpec, transport: any HCITransport, scan: ScanSettings,
                staticRandomAddress: BluetoothAddress? = nil, isPermanent: @escaping (TransportError) -> Bool) {
        self.loop = loop
        self.spec = spec
        self.transport = transport
        link = ControllerDriver(loop: loop, transport: transport,
                                configuration: HostConfiguration(scan: scan, staticRandomAddress: staticRandomAddress),
                              isPermanent: isPermanent)
    }

    /// Starts the link and runs the loop until something stops it: SIGINT, SIGTERM, `limit`
    /// running out, or the command itself. Returns only once the adapter is handed back;
    /// the result says why the run failed, if it did (the signals could not be handled, or
    /// the loop broke).
    public func run(limit: Duration?, log: LogSink) -> String? {
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
}
