import HCI
import Journal

/// `--transport` given on the command line, else the configuration's transport: a bad
/// value is a usage error naming the valid forms.
func transportSpec(option: String?, otherwise fallback: TransportSpec) throws -> TransportSpec {
    guard let option else { return fallback }
    do {
        return try TransportSpec(parsing: option)
    } catch {
        printError("--transport: \(error.description)")
        throw GatewayExitCode.configurationError
    }
}
