import ArgumentParser
import Journal
import Store

/// `outbox list`: events in chosen states, oldest first.
struct OutboxListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List events in the chosen states, oldest first."
    )

    @OptionGroup var location: OutboxLocation
    @OptionGroup var sink: OutboxSinkOption

    @Option(name: .long, help: "Comma-separated states: pending, sent, rejected, dead or all.")
    var state: String = "pending,dead"

    @Option(name: .long, help: "At most this many events.")
    var limit: Int = 50

    @Flag(name: .long, help: "JSON lines instead of text.")
    var json = false

    func validate() throws {
        _ = try parseStates(state)
        guard limit > 0 else { throw ValidationError("--limit must be positive") }
    }

    func run() throws {
        let states = try parseStates(state)
        let store = try location.openStore(readOnly: true)
        let sink = try sink.resolve(store)
        try orFail { () throws(StoreError) in
            try store.forEachEntry(sink: sink, states: states, limit: limit) { entry in
                if json {
                    writeStandardOutput(entry.jsonLine + "\n")
                } else {
                    var line = "\(entry.sequence)\t\(entry.state)\t\(entry.type)\t\(entry.personId)\t\(entry.idempotencyKey)\tattempts=\(entry.attempts)"
                    if let status = entry.lastStatus { line += "\tstatus=\(status)" }
                    if let error = entry.lastError { line += "\terror=\(error)" }
                    writeStandardOutput(line + "\n")
                }
                return true
            }
        }
    }
}
