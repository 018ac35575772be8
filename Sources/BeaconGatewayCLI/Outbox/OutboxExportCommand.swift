import ArgumentParser
import Journal
import Store

/// `outbox export`: every event in the chosen states as JSON lines, streamed.
struct OutboxExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the events in the chosen states as JSON lines."
    )

    @OptionGroup var location: OutboxLocation
    @OptionGroup var sink: OutboxSinkOption

    @Option(name: .long, help: "Comma-separated states: pending, sent, rejected, dead or all.")
    var state: String = "all"

    func validate() throws { _ = try parseStates(state) }

    func run() throws {
        let states = try parseStates(state)
        let store = try location.openStore(readOnly: true)
        let sink = try sink.resolve(store)
        try orFail { () throws(StoreError) in
            try store.export(sink: sink, states: states) { entry in writeStandardOutput(entry.jsonLine + "\n") }
        }
    }
}
