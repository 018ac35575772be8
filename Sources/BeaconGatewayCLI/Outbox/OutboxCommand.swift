import ArgumentParser

/// `beacon-gateway outbox …`: inspect and repair the outbox (see docs/cli.md), safe to use while
/// the service runs (SQLite WAL: readers never block the agent, writers wait their turn).
struct OutboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Inspect and repair the outbox of events waiting for the server.",
        discussion: """
        status, list, retry-dead, export and backup work on the store in gateway.state_dir and may \
        run while the service runs. enqueue and deliver are testing and benchmarking aids: \
        enqueue commits synthetic events, deliver runs only the forwarder.
        """,
        subcommands: [
            OutboxStatusCommand.self, OutboxListCommand.self, OutboxRetryDeadCommand.self, OutboxExportCommand.self,
            OutboxBackupCommand.self,
            OutboxEnqueueCommand.self, OutboxDeliverCommand.self,
        ]
    )
}
