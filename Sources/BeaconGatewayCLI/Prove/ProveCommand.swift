import ArgumentParser
import Config
import HCITransport
import HostDrivers
import Journal

/// `beacon-gateway prove TAG`: one handshake (see docs/proof-protocol.md) against a configured tag, with the
/// result and where the time went.
struct ProveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prove",
        abstract: "Run one proof handshake against a configured tag and print the result and its timings.",
        discussion: """
        Waits for the tag to advertise, connects (accept list or direct, as configured), \
        writes a fresh challenge, reads and verifies the response. Exit status 0 on a valid \
        proof, 1 otherwise. --count repeats it on the same controller (handles cached after \
        the first valid proof); --json prints one JSON object per handshake.
        """
    )

    @Argument(help: "The tag id ([[person.tag]] id).")
    var tag: String

    @Option(name: .long, help: "Configuration file.")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "Give up after this many seconds (default 30).")
    var timeout: Double = 30

    @Option(name: .long, help: "Proofs to run one after the other (default 1).")
    var count: Int = 1

    @Option(name: .long, help: "Handshakes per proof before it counts as failed (default 1).")
    var tries: Int = 1

    @Flag(name: .long, help: "One JSON object per handshake instead of the text report.")
    var json = false

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be 0…86400 seconds, got \(timeout)") }
        guard (1 ... 100_000).contains(count) else { throw ValidationError("--count must be 1…100000, got \(count)") }
        guard (1 ... 10).contains(tries) else { throw ValidationError("--tries must be 1…10, got \(tries)") }
    }

    func run() throws {
        let configuration = try loadConfiguration(path: config)
        guard let target = ProveSession.Target(tagId: tag, configuration: configuration) else {
            printError("prove: no tag \"\(tag)\" in \(config)")
            throw GatewayExitCode.configurationError
        }
        guard target.key != nil else {
            printError("prove: tag \"\(tag)\" has no key: set its key or [security] master_key_file")
            throw GatewayExitCode.configurationError
        }
        let session = ProveSession(configuration: configuration, target: target, transport: configuration.bluetooth.transport,
                                   timeout: .milliseconds(Int64(timeout * 1000)), count: count, tries: tries, json: json)
        switch session.run() {
        case .proven:
            return
        case .notProven:
            throw GatewayExitCode.runtimeFailure
        case .failed(let message):
            printError("prove: \(message)")
            throw GatewayExitCode.runtimeFailure
        }
    }
}
