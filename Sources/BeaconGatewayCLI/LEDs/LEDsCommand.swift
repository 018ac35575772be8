import ArgumentParser
import Config
import EventLoop
import Journal
import LEDs

/// `beacon-gateway leds …`: the LEDs on their own, for the installer.
struct LEDsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leds",
        abstract: "Check the door's LEDs.",
        subcommands: [LEDsTestCommand.self]
    )
}

/// `beacon-gateway leds test`: lights green, amber and red one after the other, then all
/// three, then none, saying what should be lit, so an installer sees a wrong offset,
/// a swapped wire or a dead LED at once.
struct LEDsTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Cycle the LEDs: green, amber, red, all, off (1 s each).",
        discussion: """
        The wiring comes from the configuration's [leds] section, or from --chip, --green, \
        --amber and --red (all three offsets together), which override it.
        """
    )

    @Option(name: .long, help: "Configuration file (its [leds] section).")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "GPIO chip: gpiochipN or /dev/gpiochipN (default: the configuration's, else gpiochip0).")
    var chip: String?

    @Option(name: .long, help: "Line offset of the green LED.")
    var green: Int?

    @Option(name: .long, help: "Line offset of the amber LED.")
    var amber: Int?

    @Option(name: .long, help: "Line offset of the red LED.")
    var red: Int?

    @Flag(name: .long, help: "The LEDs light when their line is low (common anode).")
    var activeLow = false

    @Option(name: .long, help: "Seconds each step stays lit.")
    var seconds: Double = 1

    func validate() throws {
        let given = [green, amber, red].compactMap { $0 }
        if !given.isEmpty && given.count != 3 { throw ValidationError("--green, --amber and --red go together") }
        if given.contains(where: { $0 < 0 }) { throw ValidationError("line offsets are 0 or more") }
        if !(seconds > 0 && seconds <= 60) { throw ValidationError("--seconds must be between 0 and 60, got \(seconds)") }
    }

    func run() throws {
        let wiring = try resolveWiring()
        let lines: GPIOLines
        do {
            lines = try GPIOLines(wiring: wiring)
        } catch {
            printError(error.description)
            throw GatewayExitCode.runtimeFailure
        }
        defer { lines.release() }

        let wiringText = "\(wiring.chip) lines green=\(wiring.green) amber=\(wiring.amber) red=\(wiring.red)\(wiring.activeLow ? " active-low" : "")"
        writeStandardOutput("LED test on \(wiringText)\n")
        var steps: [(String, LEDLevels)] = LEDColor.allCases.map { ("\($0) (line \(wiring.offset(of: $0)))", .only($0)) }
        steps.append(("all three", .allOn))
        steps.append(("none", .allOff))

        let loop = EventLoop()
        var failure: GPIOError?
        var interrupted = false
        let step = Duration.nanoseconds(Int64(seconds * 1e9))
        func show(_ index: Int) {
            guard index < steps.count else { return loop.stop() }
            let (name, levels) = steps[index]
            do {
                try lines.show(levels)
            } catch {
                failure = error
                return loop.stop()
            }
            writeStandardOutput(index == steps.count - 1 ? "off\n" : "lit: \(name)\n")
            // The last step (all off) ends the test at once.
            if index == steps.count - 1 { return loop.stop() }
            loop.schedule(after: step) { show(index + 1) }
        }
        do {
            try loop.onSignal(.interrupt) { interrupted = true; loop.stop() }
            try loop.onSignal(.terminate) { interrupted = true; loop.stop() }
            loop.schedule(after: .zero) { show(0) }
            try loop.run()
        } catch {
            printError("leds test: \(error)")
            throw GatewayExitCode.runtimeFailure
        }
        loop.stopHandlingSignals()
        if let failure {
            printError(failure.description)
            throw GatewayExitCode.runtimeFailure
        }
        if interrupted { writeStandardOutput("interrupted; LEDs off\n") }
    }

    /// Options win over the configuration; without either, there is nothing to test.
    private func resolveWiring() throws -> LEDWiring {
        if let green, let amber, let red {
            return LEDWiring(chip: chip ?? LEDWiring.defaultChip, green: green, amber: amber, red: red, activeLow: activeLow)
        }
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config)
        } catch {
            printError(error.description)
            printError("give the wiring with --chip, --green, --amber and --red, or fix \(config)")
            throw GatewayExitCode.configurationError
        }
        guard let leds = configuration.leds else {
            printError("\(config) has no [leds] section: no LEDs to test (or give --green, --amber and --red)")
            throw GatewayExitCode.configurationError
        }
        var wiring = leds
        wiring.chip = chip ?? leds.chip
        wiring.activeLow = leds.activeLow || activeLow
        return wiring
    }
}
