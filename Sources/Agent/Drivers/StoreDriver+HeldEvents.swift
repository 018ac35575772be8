#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Fleet
import GatewayCore
import Store

/// Decisions the store refused, kept over a stop (docs/reliability.md, "Held over a
/// restart"): at the stop they go to `held-events` in the runtime directory (a tmpfs, so
/// a read-only or full card does not matter), at the next start they are stored before
/// anything is decided, and the file is removed only once they are.
extension StoreDriver {
    static let heldEventsFileName = "held-events"

    /// `$RUNTIME_DIRECTORY/held-events`, else `/run/beacon-gateway/held-events` (the
    /// status socket's directory rule).
    var heldEventsPath: String {
        StatusSocketPath.directory(of: StatusSocketPath.resolve()) + "/" + Self.heldEventsFileName
    }

    // MARK: At start

    /// Reads what the last run kept, before the store is opened. A damaged or hostile file
    /// is moved aside (never deleted) and said so; one kept for another database is left
    /// where it is, for that agent.
    func loadHeldEvents() {
        let path = heldEventsPath
        let bytes: [UInt8]
        switch Self.readBounded(path, limit: HeldEventsFile.maximumBytes + 1) {
        case .missing:
            return
        case let .failed(operation, code):
            log.log(.error, "cannot read the events held over the restart; they are left where they are", [
                "file": path, "operation": operation, "error": String(cString: strerror(code)),
            ])
            heldEventsFileBlocked = true
            return
        case let .read(content):
            bytes = content
        }
        let held: HeldEventsFile
        do {
            held = try HeldEventsFile(decoding: bytes)
        } catch {
            let target = path + ".corrupt-" + corruptFileSuffix()
            let moved = rename(path, target) == 0
            log.log(.error, "events held over the restart are unreadable; the file is moved aside, not used", [
                "file": path, "reason": error.reason, "moved_to": moved ? target : "-",
                "error": moved ? "-" : String(cString: strerror(errno)),
            ])
            heldEventsFileBlocked = !moved
            return
        }
        guard held.databasePath == databasePath else {
            log.log(.warning, "events held over the restart belong to another database; left for it", [
                "file": path, "database": held.databasePath, "this_database": databasePath,
            ])
            heldEventsFileBlocked = true
            return
        }
        heldEvents = held
        log.log(.notice, "events held over the restart found; they are stored before anything new", [
            "file": path, "count": "\(held.batch.events.count)",
        ])
    }

    /// Stores the events the last run kept, if any are still waiting: called before every
    /// write to the store, so they keep their place ahead of this run's events and
    /// checkpoints. Events whose key is stored already (a replay cut short) are skipped
    /// by the store; the file goes once the transaction has committed.
    func storeHeldEvents() throws(StoreError) {
        guard let held = heldEvents, let store else { return }
        var sequences: [Int64?] = []
        try store.commit { transaction throws(StoreError) in
            sequences = try Self.append(held.batch, in: &transaction)
        }
        heldEvents = nil
        let removed = unlink(heldEventsPath) == 0 || errno == ENOENT
        log.log(.notice, "events held over the restart stored", [
            "count": "\(held.batch.events.count)", "stored": "\(sequences.compactMap { $0 }.count)",
            "first_sequence": sequences.compactMap { $0 }.first.map { "\($0)" } ?? "-",
            "file": removed ? "removed" : "not removed: \(String(cString: strerror(errno)))",
        ])
        hooks.heldEventsStored()
    }

    /// The stored records, with those of events still held over the restart laid over
    /// them (`HeldEventsFile.laidOver`).
    func overlayingHeldRecords(_ stored: [String: [UInt8]]) -> [String: [UInt8]] {
        heldEvents?.laidOver(stored) ?? stored
    }

    /// Events held over the restart go to a store just opened; a failure is disk trouble
    /// like any other (they are tried again before every write).
    func storeHeldEventsOrRetry() {
        guard heldEvents != nil, store != nil else { return }
        do {
            try storeHeldEvents()
            succeeded()
        } catch {
            failed(error)
        }
    }

    // MARK: At the stop

    /// After the last attempt: what is still not stored (from the last run, then this
    /// one's `current`) is written to the held-events file; if it cannot be, each event is
    /// logged with its key (the returned lines). The file's events are no longer this
    /// driver's to store: the closing checkpoint must not remove it.
    func keepHeldEvents(_ current: DoorCommitBatch?) -> [DoorAction] {
        defer { heldEvents = nil }
        let held: DoorCommitBatch
        switch (heldEvents?.batch, current) {
        case (nil, nil): return []
        case let (older?, nil): held = older
        case let (nil, newer?): held = newer
        case let (older?, newer?): held = older.followed(by: newer)
        }
        let path = heldEventsPath
        var failure: String?
        if heldEventsFileBlocked {
            failure = "\(path) holds a file that was not used; it is not overwritten"
        } else {
            let bytes = HeldEventsFile(databasePath: databasePath, batch: held).encode()
            if bytes.count > HeldEventsFile.maximumBytes {
                failure = "\(bytes.count) bytes, more than a held-events file may have"
            } else {
                failure = Self.writeDurably(path, bytes)
            }
        }
        return DoorCore.shutdownLines(held: held, keptIn: failure == nil ? path : nil, failure: failure)
    }

    // MARK: Files

    enum BoundedRead {
        case missing
        case read([UInt8])
        case failed(operation: String, errno: Int32)
    }

    /// The file's bytes, at most `limit` of them (a longer file is refused by its length).
    static func readBounded(_ path: String, limit: Int) -> BoundedRead {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .failed(operation: "open", errno: errno) }
        defer { Glibc.close(fd) }
        do throws(Errno) {
            return .read(try FileDescriptorIO.read(fd, upTo: limit))
        } catch {
            return .failed(operation: "read", errno: error.code)
        }
    }

    /// Temporary file (mode 0600), fsync, rename, directory fsync; nil when written, else why not.
    static func writeDurably(_ path: String, _ bytes: [UInt8]) -> String? {
        do throws(SystemCallFailure) {
            try AtomicFile.replace(path, with: bytes, mode: 0o600, durability: .durable)
            return nil
        } catch {
            return error.description
        }
    }
}
