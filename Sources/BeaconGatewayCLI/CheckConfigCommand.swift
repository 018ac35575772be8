import ArgumentParser
import Config
import Journal

/// `beacon-gateway check-config`: validates the configuration and prints it with
/// defaults filled in and secrets masked; every problem is listed at once.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate the configuration and print the effective settings (secrets masked)."
    )

    @Option(name: .long, help: "Configuration file.")
    var config: String = defaultConfigurationPath

    func run() throws {
        do {
            let configuration = try GatewayConfiguration.load(path: config)
            print(configuration.renderEffective(), terminator: "")
        } catch {
            printError(error.description)
            printError("\(config): \(error.issues.count) problem\(error.issues.count == 1 ? "" : "s"); nothing was started")
            throw GatewayExitCode.configurationError
        }
    }
}

let defaultConfigurationPath = "/etc/beacon-gateway/gateway.toml"
