import ArgumentParser
import Config
import HCITransport
import Host
import Journal
#if canImport(Glibc)
import Glibc
#endif

/// `beacon-gateway scan`: a live view of every advertiser the controller hears.
struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Show the advertisers in range: address, identity, RSSI, reports/s and matched person.",
        discussion: """
        On a terminal the table is refreshed in place, strongest first. With --json one JSON \
        object per advertiser is printed every second, and a closing line per advertiser \
        ("final": true) at the end. With a btsnoop: transport the whole capture is processed \
        and only the closing output is printed.
        """
    )

    @Option(name: .long, help: "hciN, tcp:HOST:PORT, serial:PATH[@BAUD] or btsnoop:FILE (default: the configuration's, else hci0).")
    var transport: String?

    @Option(name: .long, help: "Stop after this many seconds (default: until interrupted).")
    var seconds: Double?

    @Flag(name: .long, help: "Print JSON lines (format: docs/cli.md) instead of the table.")
    var json = false

    @Option(name: .long, help: ArgumentHelp(
        "Configuration file: its transport and scan settings, and the person and tag each advertiser belongs to.",
        discussion: "Default: \(defaultConfigurationPath) when it exists, as for run."))
    var config: String?

    @Flag(name: .long, help: "Scan without a configuration: hci0 unless --transport says otherwise, no persons.")
    var noConfig = false

    @Option(name: .long, help: "Write every HCI packet, both ways, to this btsnoop file (opens in Wireshark/tshark).")
    var capture: String?

    @Option(name: .long, help: "Fraction of time the radio listens, 0.1…1.0 (for Pis whose Wi-Fi shares the radio).")
    var duty: Double?

    @Flag(name: .long, help: "Active scanning (ask for scan responses); the default is passive.")
    var active = false

    func validate() throws {
        if config != nil, noConfig { throw ValidationError("give --config PATH or --no-config, not both") }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be a positive number of seconds, got \(seconds)") }
        if let duty, !(0.1 ... 1.0).contains(duty) { throw ValidationError("--duty must be between 0.1 and 1.0, got \(duty)") }
    }

    func run() throws {
        var configuration: GatewayConfiguration?
        if let path = configurationPath {
            do {
                configuration = try GatewayConfiguration.load(path: path)
            } catch {
                printError(error.description)
                if config == nil { printError("scan: (the installed configuration; --no-config scans without it)") }
                throw GatewayExitCode.configurationError
            }
        } else if !noConfig {
            printError("scan: no configuration at \(defaultConfigurationPath); scanning without persons (--config PATH names one)")
        }
        let spec = try transportSpec(option: transport, otherwise: configuration?.bluetooth.transport ?? .userChannel(index: 0))
        let options = ScanSession.Options(
            transport: spec,
            seconds: seconds,
            output: json ? .json : (isTerminal(1) ? .liveTable : .finalTable),
            capturePath: capture,
            scan: configuration?.bluetooth.scanSettings(active: active, duty: duty)
                ?? ScanSettings(mode: active ? .active : .passive, dutyOverride: duty),
            tags: configuration.map(ScanSession.configuredTags) ?? [],
            configuration: configuration
        )
        let session = ScanSession(options: options)
        let outcome = session.run()
        if case let .failed(message) = outcome {
            printError("scan: \(message)")
            throw GatewayExitCode.runtimeFailure
        }
    }

    /// `--config`, else the installed configuration when it exists (what `run` reads),
    /// else none.
    private var configurationPath: String? {
        if let config { return config }
        if noConfig { return nil }
        return access(defaultConfigurationPath, F_OK) == 0 ? defaultConfigurationPath : nil
    }
}
