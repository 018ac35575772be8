import ArgumentParser
import EventLoop
import Journal
import Store

/// `outbox backup FILE`: a consistent copy of the outbox while the service runs
/// (docs/runbooks.md, "Backing up the outbox").
struct OutboxBackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of the outbox to FILE, while the service may run.",
        discussion: """
        The copy holds every event committed before it began, as one standalone SQLite file \
        (no -wal beside it). FILE must not exist. Restore: stop the service, put the copy in \
        place as gateway.sqlite in the state directory (owned by beacon-gateway), start it.
        """
    )

    @OptionGroup var location: OutboxLocation

    @Argument(help: "Where to write the copy (must not exist).")
    var file: String

    func run() throws {
        let store = try location.openStore(readOnly: true)
        try orFail { () throws(StoreError) in try store.backup(to: file) }
        // What the copy holds, read from the copy.
        let status = try orFail { () throws(StoreError) in
            try Store(path: file, readOnly: true).status(nowMillis: SystemClock().wallMilliseconds)
        }
        writeStandardOutput("backed up \(store.path) to \(file): last sequence \(status.lastSequence), "
            + "pending \(status.pending), dead \(status.dead)\n")
    }
}
