import ArgumentParser
import Journal
#if canImport(Glibc)
import Glibc
#endif

/// The `beacon-gateway` command line (see docs/cli.md).
@main
struct BeaconGateway: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "beacon-gateway",
        abstract: "A presence gateway for a door: raw-HCI BLE scanning, tag recognition and check-in/check-out.",
        discussion: "Documentation: /usr/share/doc/beacon-gateway/ when installed from the package (docs/README.md "
            + "indexes the guides; docs/raspberry-pi.md installs a door).",
        version: version,
        subcommands: [
            RunCommand.self, ScanCommand.self, CheckConfigCommand.self, OutboxCommand.self, KeygenCommand.self,
            CalibrateCommand.self, LEDsCommand.self, ProveCommand.self, EnrollCommand.self, TagCommand.self, StatusCommand.self,
        ]
    )

    /// Like `ParsableCommand.main()`, but usage errors exit with 2 as docs/cli.md says
    /// (the parser's own convention is 64, EX_USAGE).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if code == .success {
                    print(message)
                } else {
                    printError(message)
                }
            }
            Glibc.exit(code == .validationFailure ? GatewayExitCode.configurationError.rawValue : code.rawValue)
        }
    }
}

/// Exit codes (see docs/cli.md): 0 success, 1 runtime failure, 2 usage or configuration error.
enum GatewayExitCode {
    static let runtimeFailure = ExitCode(1)
    static let configurationError = ExitCode(2)
}
