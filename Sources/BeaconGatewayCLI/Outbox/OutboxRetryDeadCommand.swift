import ArgumentParser
import EventLoop
import Journal
import Store

/// `outbox retry-dead`: dead letters back to pending; the running service notices
/// within a second and sends them again.
struct OutboxRetryDeadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry-dead",
        abstract: "Put every dead letter back in the queue, to be sent again."
    )

    @OptionGroup var location: OutboxLocation
    @OptionGroup var sink: OutboxSinkOption

    func run() throws {
        // Looked at read-only first: with no outbox there are no dead letters, and nothing
        // is created.
        _ = try location.openStore(readOnly: true)
        let store = try location.openStore(readOnly: false)
        let sinkName = try sink.resolve(store)
        let count = try orFail { () throws(StoreError) in try store.retryDead(sink: sinkName, nowMillis: SystemClock().wallMilliseconds) }
        writeStandardOutput("\(count) dead letter\(count == 1 ? "" : "s") queued again\n")
    }
}
