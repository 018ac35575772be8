import ArgumentParser

/// The `beacon-gateway` command line (SPEC §12).
@main
struct BeaconGateway: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "beacon-gateway",
        abstract: "A presence gateway for a door: raw-HCI BLE scanning, tag recognition and check-in/check-out.",
        version: version,
        subcommands: [ScanCommand.self, CheckConfigCommand.self, KeygenCommand.self]
    )
}

/// Exit codes of SPEC §12: 0 success, 1 runtime failure, 2 usage or configuration error.
enum GatewayExitCode {
    static let runtimeFailure = ExitCode(1)
    static let configurationError = ExitCode(2)
}
