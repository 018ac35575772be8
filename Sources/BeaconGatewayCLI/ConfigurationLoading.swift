import ArgumentParser
import Config
import Journal

/// The configuration a controller command runs with; its problems printed and exit 2
/// (docs/cli.md) when it does not load.
func loadConfiguration(path: String) throws -> GatewayConfiguration {
    do {
        return try GatewayConfiguration.load(path: path)
    } catch {
        printError(error.description)
        throw GatewayExitCode.configurationError
    }
}
