#if canImport(Glibc)
import Glibc
#endif
import AttendanceEvents
import Config
import EventLoop
import GatewayCore
import Journal
import Store

/// The outbox and persisted presence on disk, and their health (docs/reliability.md,
/// "Disk trouble"): the door keeps scanning and deciding while events cannot be stored;
/// every store operation's result goes through `StoreHealth`, which says when the state
/// changed (logged once here, shown by the agent) and when to try the disk again; a
/// corrupt database is examined and rebuilt or moved aside and a fresh one started.
/// It also keeps the events held over a restart (StoreDriver+HeldEvents) and prunes the
/// outbox (StoreDriver+Retention).
final class StoreDriver {
    /// What the rest of the door does when the store changes.
    struct Hooks {
        /// Events can (false) or cannot (true) be stored now: a change, logged here.
        var troubleChanged: (Bool) -> Void
        /// A database reported corrupt was examined: found sound, or moved aside with a salvage.
        var recovered: (CorruptionRecovery) -> Void
        /// Decisions the door holds that are not stored yet.
        var uncommittedCount: () -> Int
        /// The disk is tried again and decisions are held: commit them now.
        var retryCommits: () -> Void
        /// The store is about to be closed and opened again: whatever reads it stops.
        var closing: () -> Void
        /// A store opened after a retry.
        var reopened: (Store) -> Void
        /// Events held over the restart were stored.
        var heldEventsStored: () -> Void
        /// Whether the door has an outbox sink now, for retention's policy (without one,
        /// unsent events are pruned too, after longer: docs/event-api.md, "Retention").
        var hasSinks: () -> Bool
        /// The door stops and every other driver has: what must survive is written now
        /// (the door's last commit attempt, the events still held, the closing checkpoint).
        var stopping: () -> Void
    }

    /// How long a statement waits for another process's write lock. Short: the loop
    /// must not stall (a long `outbox` command holds the lock for its length); a commit
    /// that finds the lock taken is retried from a timer instead.
    static let busyTimeoutMillis: Int32 = 50

    static var configuration: StoreConfiguration {
        StoreConfiguration(busyTimeoutMillis: busyTimeoutMillis)
    }

    let loop: EventLoop
    var log: LogSink
    let stateDirectory: String
    let hooks: Hooks
    private(set) var store: Store?
    /// Whether events can be stored, and when to try the disk again.
    private(set) var health = StoreHealth()
    /// The last database reported corrupt was found sound.
    private var foundSoundBefore = false
    private lazy var retryTimer = DeadlineTimer(loop: loop) { [unowned self] in self.retry() }
    /// Events the last run could not store, read from the runtime directory and not yet
    /// stored (StoreDriver+HeldEvents).
    var heldEvents: HeldEventsFile?
    /// The held-events file there could not be used (unreadable, another database's):
    /// it is not overwritten at the stop.
    var heldEventsFileBlocked = false
    /// Outbox retention, with or without a server (StoreDriver+Retention).
    lazy var retention = RetentionSchedule(startedAt: loop.now)
    lazy var retentionTimer = DeadlineTimer(loop: loop) { [unowned self] in self.retentionDue() }

    init(loop: EventLoop, log: LogSink, stateDirectory: String, hooks: Hooks) {
        self.loop = loop
        self.log = log
        self.stateDirectory = stateDirectory
        self.hooks = hooks
    }

    var databasePath: String { Store.path(stateDirectory: stateDirectory) }

    /// `read-only`, `full`, …; nil while events are stored.
    var trouble: StoreTrouble? { health.trouble }

    /// Closed after the stop, once the last checkpoint is written.
    func close() {
        retryTimer.cancel()
        retentionTimer.cancel()
        store = nil
    }

    // MARK: Opening

    /// At start: the events the last run held read, the store opened (or tried again on
    /// the backoff), those events stored, retention scheduled.
    func start(_ configuration: GatewayConfiguration) {
        loadHeldEvents()
        openOrRetry()
        storeHeldEventsOrRetry()
        startRetention()
    }

    /// At start: the store, or — when it cannot be opened — the door runs on without it
    /// and tries again on the backoff.
    func openOrRetry() {
        do {
            try open()
        } catch {
            switch error {
            case let .store(_, failure): failed(failure)
            case let .stateDirectory(directory, code):
                failed(.file(path: directory, operation: "create the state directory", errno: code))
            }
        }
    }

    private func open() throws(AgentError) {
        if mkdir(stateDirectory, 0o750) != 0 && errno != EEXIST {
            throw .stateDirectory(stateDirectory, errno: errno)
        }
        let path = databasePath
        do {
            let opened = try Store.openRecovering(path: path, configuration: Self.configuration, suffix: corruptFileSuffix())
            if let moved = opened.movedAside { announce(.movedAside(moved), path: path) }
            store = opened.store
        } catch {
            throw .store(path, error)
        }
    }

    /// Where a corrupt file goes: `gateway.sqlite.corrupt-20261124T101500Z`.
    func corruptFileSuffix() -> String {
        let stamp = ISO8601Timestamp.format(millisecondsSinceEpoch: loop.wallMilliseconds)
        // 2026-11-24T10:15:00.123Z → 20261124T101500Z: no colons in a file name.
        let seconds = stamp.prefix(19).filter { $0 != "-" && $0 != ":" }
        return seconds + "Z"
    }

    private func announce(_ recovery: CorruptionRecovery, path: String) {
        hooks.recovered(recovery)
        switch recovery {
        case .sound:
            log.log(.warning, "database reported corrupt is sound; used as it is", ["path": path])
        case let .movedAside(moved):
            log.log(.error, "corrupt database moved aside; a fresh one started", [
                "moved_to": moved.path, "reason": moved.reason, "first_sequence": "\(moved.firstSequence)",
                "salvaged_next_sequence": moved.salvagedNextSequence.map { "\($0)" } ?? "-",
                "salvaged_events": "\(moved.salvage.events)", "salvaged_presence": "\(moved.salvage.presence)",
                "unreadable_stretches": moved.salvage.unreadable ? "all" : "\(moved.salvage.unreadableStretches)",
                "old_copies_removed": "\(moved.copiesRemoved.count)",
            ])
        }
    }

    // MARK: Health, at every operation

    /// A store operation reached the disk.
    func succeeded() {
        guard let change = health.succeeded(at: loop.now) else { return }
        healthChanged(change, error: nil)
    }

    /// A store operation failed (here, or delivery's or retention's reads). Refusals that
    /// are no disk trouble (the outbox's cap) are the caller's to report.
    func failed(_ error: StoreError) {
        guard let trouble = error.trouble else { return }
        if let change = health.failed(trouble, at: loop.now) {
            healthChanged(change, error: error)
        }
        retryTimer.arm(at: health.nextRetry)
    }

    private func healthChanged(_ change: StoreHealth.Change, error: StoreError?) {
        if let trouble = change.trouble {
            // A lock is most often an `outbox` command of the operator's, over in a moment.
            log.log(trouble == .locked ? .warning : .error, "events cannot be stored; decisions are kept in memory and retried", [
                "cause": trouble.rawValue, "previous": change.previous?.rawValue ?? "-", "path": databasePath,
                "held_events": "\(hooks.uncommittedCount())", "error": error?.description ?? "-",
            ])
        } else {
            log.log(.notice, "events are stored again", [
                "cause": change.previous?.rawValue ?? "-", "path": databasePath,
                "after_s": change.lasted.map { "\($0.components.seconds)" } ?? "-",
            ])
        }
        hooks.troubleChanged(change.trouble != nil)
    }

    // MARK: Retrying

    /// The disk is tried again: reopened when a fresh connection may help (a file system
    /// remounted, a corrupt file to move aside), then the held decisions are committed,
    /// or — with none held — a small write shows whether the disk takes data again.
    private func retry() {
        guard let trouble = health.trouble else { return }
        health.retrying(at: loop.now)
        if store == nil || trouble.needsReopen || store?.isWritable == false {
            reopen(movingAsideCorrupt: trouble == .corrupt)
        }
        if let store {
            if hooks.uncommittedCount() == 0 {
                do {
                    try storeHeldEvents()
                    try store.checkWritable(nowMillis: loop.wallMilliseconds)
                    succeeded()
                } catch {
                    failed(error)
                }
            } else {
                hooks.retryCommits()
            }
        }
        retryTimer.arm(at: health.nextRetry)
    }

    /// Closes the store (and what reads it) and opens it again; a database a commit found
    /// corrupt is examined first.
    private func reopen(movingAsideCorrupt: Bool) {
        hooks.closing()
        store = nil
        let path = databasePath
        if movingAsideCorrupt {
            // Examined first, rebuilt or moved aside with what can be read (Store.recover).
            do {
                let reason = StoreError.corruptRow("an operation found the database damaged")
                // A file found sound once and reported corrupt again is not trusted twice.
                let (recovered, recovery) = try Store.recover(path: path, configuration: Self.configuration,
                                                             suffix: corruptFileSuffix(), reason: reason,
                                                             examining: !foundSoundBefore)
                announce(recovery, path: path)
                foundSoundBefore = recovery == .sound
                store = recovered
                health.reopened()
            } catch {
                failed(error)
                return
            }
        } else {
            openOrRetry()
            if store != nil { health.reopened() }
        }
        storeHeldEventsOrRetry()
        if let store { hooks.reopened(store) }
    }

    // MARK: Writing

    /// Appends the batch's events (each body rendered with the sequence the store gives
    /// it) and writes its records, in one transaction.
    func commit(_ batch: DoorCommitBatch) -> DoorCommitResult {
        // Without a store (not open yet, or closed to be reopened) the health machine has
        // said so once already.
        guard let store else { return .failed(DoorStoreFailure(message: "no store", outboxFull: false, isDiskTrouble: true)) }
        var sequences: [Int64?] = []
        do {
            try storeHeldEvents()
            try store.commit { transaction throws(StoreError) in
                sequences = try Self.append(batch, in: &transaction)
            }
        } catch {
            failed(error)
            let outboxFull: Bool = if case .outboxFull = error { true } else { false }
            return .failed(DoorStoreFailure(message: error.description, outboxFull: outboxFull, isDiskTrouble: error.trouble != nil))
        }
        succeeded()
        return .committed(sequences: sequences)
    }

    /// A checkpoint; nil when saved, else why not.
    func save(_ checkpoint: DoorCheckpoint) -> String? {
        guard let store else { return "no store" }
        let write: (inout StoreTransaction) throws(StoreError) -> Void = { transaction throws(StoreError) in
            try Self.write(checkpoint.records, in: &transaction)
        }
        do {
            // Held over a restart: stored ahead of any record written after them.
            try storeHeldEvents()
            if checkpoint.durable {
                try store.commit(write)
            } else {
                try store.commitRelaxed(write)
            }
        } catch {
            failed(error)
            return error.description
        }
        succeeded()
        return nil
    }

    /// The batch's events (each body rendered with the sequence the store gives it) and
    /// records, in the caller's transaction; one sequence per event, nil where its key
    /// was stored already.
    static func append(_ batch: DoorCommitBatch, in transaction: inout StoreTransaction) throws(StoreError) -> [Int64?] {
        var sequences: [Int64?] = []
        for event in batch.events {
            let sequence = try transaction.appendEvent(
                idempotencyKey: event.idempotencyKey, type: event.type.rawValue, personId: event.userId,
                createdAtMillis: event.decidedAtMilliseconds
            ) { sequence in
                var numbered = event
                numbered.sequence = sequence
                return Array(numbered.jsonBody().utf8)
            }
            sequences.append(sequence)
        }
        try write(batch.records, in: &transaction)
        return sequences
    }

    private static func write(_ records: [DoorRecordWrite], in transaction: inout StoreTransaction) throws(StoreError) {
        for record in records {
            switch record {
            case let .save(key, bytes): try transaction.savePresence(personId: key, record: bytes)
            case let .delete(key): try transaction.deletePresence(personId: key)
            }
        }
    }
}

extension StoreDriver: AgentDriver {
    /// Nothing: the state directory is the one it was built with (`state_dir` applies on
    /// restart), and retention asks whether the door has a server each time it runs.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {}

    /// Last of all (it started first): what must survive the stop is written.
    func stop() {
        hooks.stopping()
    }
}
