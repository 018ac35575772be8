import Agent
import ArgumentParser
import Config
import EventLoop
import Journal
import LEDs

/// `beacon-gateway run`: the door agent (the systemd service).
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the door agent: scan, decide presence, store and forward events.",
        discussion: """
        SIGHUP reloads the configuration without losing presence state; SIGTERM or SIGINT \
        stop cleanly. Under systemd (Type=notify) it reports READY, STATUS and WATCHDOG.
        """
    )

    @Option(name: .long, help: "Configuration file.")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "Write every HCI packet, both ways, to this btsnoop file (mode 0600; keys zeroed).")
    var capture: String?

    @Flag(name: .long, help: "With --capture: keep pairing keys (LTK, IRK, CSRK) in the file instead of zeroing them.")
    var captureKeys = false

    func validate() throws {
        guard !captureKeys || capture != nil else { throw ValidationError("--capture-keys needs --capture FILE") }
    }

    func run() throws {
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config)
        } catch {
            printFailure(error.description)
            printFailure("\(config): \(error.issues.count) problem\(error.issues.count == 1 ? "" : "s"); the agent did not start")
            if let leds = error.salvagedLEDs { showFatalConfiguration(on: leds) }
            throw GatewayExitCode.configurationError
        }
        var options = GatewayAgent.Options(
            configurationPath: config,
            configuration: configuration,
            appVersion: BeaconGateway.version,
            capturePath: capture
        )
        options.captureKeys = captureKeys
        let agent = GatewayAgent(options: options)
        switch agent.run() {
        case .stopped:
            return
        case .failed(let message):
            printFailure("run: \(message)")
            throw GatewayExitCode.runtimeFailure
        }
    }
}

/// Red steady on the door's LEDs (see docs/leds.md: fatal configuration error, the agent is
/// exiting), when the `[leds]` table itself was readable. The lines are released without
/// darkening them, so the lamp stays lit after the process is gone — until the next start.
func showFatalConfiguration(on wiring: LEDWiring) {
    guard let lines = try? GPIOLines(wiring: wiring) else { return }
    var engine = LEDPatternEngine()
    let now = SystemClock().now
    engine.fatalConfiguration(at: now)
    try? lines.show(engine.levels(at: now))
    lines.release(darken: false)
}

