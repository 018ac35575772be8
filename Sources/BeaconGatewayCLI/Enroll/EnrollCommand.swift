import ArgumentParser
import Config
import Fleet
import Journal
import SecurityManager

/// `beacon-gateway enroll --person ID`: pair once with a person's phone and print the
/// person with the phone's IRK (SPEC §15, docs/cli.md). With a running agent (its status
/// socket answers) the agent opens the window and the door goes on; without one the
/// command opens the configured transport itself, as `prove` does.
struct EnrollCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll",
        abstract: "Pair with a person's phone and print the person with the phone's identity key.",
        discussion: """
        Advertises connectable (name, Heart Rate service) for --seconds; the phone pairs from \
        its Bluetooth settings. With the service running, the agent does it (the door keeps \
        scanning); otherwise the command opens the configured transport itself. Without --yes \
        the six-digit value is shown on the terminal to compare (Numeric Comparison), a phone \
        that cannot compare is refused, and without a terminal the command refuses; with \
        --yes, Just Works (whichever phone pairs first is enrolled). Prints a [[person]] \
        block, or with --json one line. Exit 0 when a phone was enrolled, 1 when the window \
        ended without one or pairing failed, 2 on usage or configuration errors.
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

    @Flag(name: .long, help: "Just Works: no six digits to compare; whichever phone pairs first is enrolled.")
    var yes = false

    @Option(name: .long, help: "Configuration file.")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "The agent's status socket (default: as for status). Given, the agent must answer there.")
    var socket: String?

    var tagId: String { tag ?? "phone-" + person }

    func validate() throws {
        guard Identifier.isValid(person) else {
            throw ValidationError("--person must be 1 to 64 letters, digits or . _ - : @, got \"\(person)\"")
        }
        guard Identifier.isValid(tagId) else {
            throw ValidationError("--tag must be 1 to 64 letters, digits or . _ - : @, got \"\(tagId)\"")
        }
        guard EnrolmentChannel.secondsRange.contains(seconds) else { throw ValidationError("--seconds must be 1…3600, got \(seconds)") }
    }

    /// Just Works only when asked for (docs/cli.md, `enroll`).
    var method: PairingMethod { yes ? .justWorks : .numericComparison }

    func run() throws {
        guard yes || (isTerminal(0) && isTerminal(2)) else {
            printError("enroll: no terminal to compare the six digits on (standard input and standard error are not one): "
                + "run it on a terminal, or add --yes for Just Works, knowing that then whichever phone pairs first "
                + "in the window is enrolled")
            throw GatewayExitCode.configurationError
        }
        let path = socket ?? StatusSocketPath.resolve()
        do {
            let fd = try UnixSocketClient.connectOrThrow(path: path)
            let client = AgentEnrolmentClient(
                socketFD: fd, request: .init(personId: person, tagId: tagId, seconds: seconds, comparesDigits: method == .numericComparison),
                json: json)
            guard client.run() else { throw GatewayExitCode.runtimeFailure }
            return
        } catch let failure as UnixSocketClient.Failure {
            switch failure {
            case .notRunning where socket == nil:
                break  // No agent: standalone, below.
            case .notRunning:
                printError("enroll: no running agent answers on \(path) (without --socket, enrol standalone)")
                throw GatewayExitCode.runtimeFailure
            case .permissionDenied:
                printError("enroll: permission denied on \(path): enrolling through the agent takes root, the service's "
                    + "user, or a member of the group [security] enroll_group names who can also open the socket "
                    + "(a member of the service's group)")
                throw GatewayExitCode.runtimeFailure
            case let .failed(message):
                printError("enroll: \(path): \(message)")
                throw GatewayExitCode.runtimeFailure
            }
        }
        let configuration = try loadConfiguration(path: config)
        let session = EnrollSession(configuration: configuration, personId: person, tagId: tagId,
                                    window: .seconds(Int64(seconds)), method: method, json: json)
        guard session.run() else { throw GatewayExitCode.runtimeFailure }
    }
}
