import ArgumentParser
import Config
import Journal
#if canImport(Glibc)
import Glibc
#endif

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
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config)
            print(configuration.renderEffective(), terminator: "")
        } catch {
            printError(error.description)
            printError("\(config): \(error.issues.count) problem\(error.issues.count == 1 ? "" : "s"); nothing was started")
            throw GatewayExitCode.configurationError
        }
        try checkServiceAccess(configuration)
    }

    /// Root reads every file; the service reads them as its own user. Run by root (as
    /// `sudo check-config` is), the files the configuration names are checked for that
    /// user too, and a file it cannot read fails the check as it would fail the start.
    private func checkServiceAccess(_ configuration: GatewayConfiguration) throws {
        guard geteuid() == 0 else { return }
        let user = SecretFileRule.serviceUser
        let lookup = ServiceAccountLookup.load()
        guard let account = lookup.users.account(named: user) else {
            printError("note: checked as root; there is no user \(user) here, so what the service will read was not checked")
            return
        }
        let configPath = config.hasPrefix("/") ? config : currentDirectory() + "/" + config
        let configIsSecret = lookup.entry(configPath).map { $0.permissions & 0o077 == 0 } ?? false
        var files: [(String, ServiceAccess.Kind)] = [(configPath, configIsSecret ? .secret : .shared)]
        if let token = configuration.server?.tokenFile { files.append((token, .secret)) }
        if let ca = configuration.server?.caFile { files.append((ca, .shared)) }
        if let key = configuration.security.masterKeyFile { files.append((key, .secret)) }
        let problems = files.compactMap { path, kind in
            ServiceAccess.readProblem(path: path, kind: kind, account: account, lookUp: lookup.entry)
        }
        guard !problems.isEmpty else { return }
        for problem in problems { printError("\(configPath): \(problem)") }
        printError("\(configPath): checked as root, but the service runs as \(user) and would stop at its start: "
            + "\(problems.count) problem\(problems.count == 1 ? "" : "s")")
        throw GatewayExitCode.configurationError
    }

    private func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

let defaultConfigurationPath = "/etc/beacon-gateway/gateway.toml"
