import ArgumentParser
import Config
import Journal
import Store

/// Where the store is: the configuration's `gateway.state_dir`, or `--state-dir`.
struct OutboxLocation: ParsableArguments {
    @Option(name: .long, help: "Configuration file (its gateway.state_dir holds the store).")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "The state directory, instead of reading the configuration.")
    var stateDir: String?

    func storePath() throws -> String {
        if let stateDir { return Store.path(stateDirectory: stateDir) }
        do {
            return Store.path(stateDirectory: try GatewayConfiguration.load(path: config).gateway.stateDirectory)
        } catch {
            printError(error.description)
            throw GatewayExitCode.configurationError
        }
    }

    /// `readOnly` for the commands that only look: they must never create the file (run
    /// as root, that would leave a database the service cannot write).
    /// - Parameter noOutbox: called with the path and the message when there is no outbox
    ///   yet (before the agent's first run), besides the message on stderr.
    func openStore(readOnly: Bool, noOutbox: ((_ path: String, _ message: String) -> Void)? = nil) throws -> Store {
        let path = try storePath()
        do {
            return try Store(path: path, readOnly: readOnly)
        } catch {
            if case .noOutbox = error { noOutbox?(path, error.description) }
            printError("outbox: \(error.description)")
            throw GatewayExitCode.runtimeFailure
        }
    }
}

/// `--sink NAME`: whose delivery states `list`, `export` and `retry-dead` show (docs/cli.md):
/// by default the server's when the store has it configured, else the first configured sink
/// (a door that publishes to the site bus only: `mqtt`), else the server's.
struct OutboxSinkOption: ParsableArguments {
    @Option(name: .long, help: "The sink whose delivery states are shown: server or mqtt (default: server if configured, else the first configured).")
    var sink: String?

    func resolve(_ store: Store) throws -> String {
        if let sink { return sink }
        let configured = try orFail { () throws(StoreError) in try store.configuredSinks() }
        return configured.contains(Store.serverSink) ? Store.serverSink : configured.first ?? Store.serverSink
    }
}

/// Store failures in commands: a message and exit code 1.
func orFail<T>(_ body: () throws(StoreError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        printError("outbox: \(error.description)")
        throw GatewayExitCode.runtimeFailure
    }
}

/// `--state pending,dead`: state names, validated.
func parseStates(_ text: String) throws -> Set<OutboxState> {
    var states: Set<OutboxState> = []
    for name in text.split(separator: ",") {
        let trimmed = name.trimmingCharacters(inSet: " ")
        if trimmed == "all" { return Set(OutboxState.allCases) }
        guard let state = OutboxState(name: trimmed) else {
            throw ValidationError("unknown state \"\(trimmed)\"; use pending, sent, rejected, dead or all")
        }
        states.insert(state)
    }
    guard !states.isEmpty else { throw ValidationError("name at least one state: pending, sent, rejected, dead or all") }
    return states
}

extension Substring {
    fileprivate func trimmingCharacters(inSet character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
