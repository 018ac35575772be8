import ArgumentParser
import Config
import Journal

/// `beacon-gateway enroll --person ID`: pair once with a person's phone and print the
/// person with the phone's IRK (SPEC §15, docs/cli.md). Standalone: opens the configured
/// transport itself, as `prove` does. (Through a running agent's socket: not yet.)
struct EnrollCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll",
        abstract: "Pair with a person's phone and print the person with the phone's identity key.",
        discussion: """
        Advertises connectable (name, Heart Rate service) for --seconds; the phone pairs from \
        its Bluetooth settings. With a terminal and without --yes the six-digit value is shown \
        to compare (Numeric Comparison); otherwise Just Works. Prints a [[person]] block, or \
        with --json one line. Exit 0 when a phone was enrolled, 1 when the window ended \
        without one or pairing failed, 2 on usage or configuration errors.
        """
    )

    @Option(name: .long, help: "The person id the phone is enrolled for.")
    var person: String

    @Option(name: .long, help: "The tag id (default phone-PERSON).")
    var tag: String?

    @Option(name: .long, help: "How long the window stays open (default 120).")
    var seconds: Int = 120

    @Flag(name: .long, help: "One JSON line (a roster person) instead of the TOML block.")
    var json = false

    @Flag(name: .long, help: "Just Works: no numeric value to confirm.")
    var yes = false

    @Option(name: .long, help: "Configuration file.")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "The agent's local socket (not available yet: enrolment runs standalone).")
    var socket: String?

    var tagId: String { tag ?? "phone-" + person }

    func validate() throws {
        guard Identifier.isValid(person) else {
            throw ValidationError("--person must be 1 to 64 letters, digits or . _ - : @, got \"\(person)\"")
        }
        guard Identifier.isValid(tagId) else {
            throw ValidationError("--tag must be 1 to 64 letters, digits or . _ - : @, got \"\(tagId)\"")
        }
        guard (1 ... 3600).contains(seconds) else { throw ValidationError("--seconds must be 1…3600, got \(seconds)") }
        guard socket == nil else {
            throw ValidationError("--socket: enrolment through the running agent is not built yet; stop the service "
                + "and enrol standalone (without --socket)")
        }
    }

    func run() throws {
        let configuration = try loadConfiguration(path: config)
        let compares = !yes && isTerminal(0) && isTerminal(2)
        let session = EnrollSession(configuration: configuration, personId: person, tagId: tagId,
                                    window: .seconds(Int64(seconds)), comparesDigits: compares, json: json)
        guard session.run() else { throw GatewayExitCode.runtimeFailure }
    }
}
