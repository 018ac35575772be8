import AttendanceEvents
import Journal
import LEDs
import Store

/// Disk trouble (docs/reliability.md, "Disk trouble"): the door keeps scanning and
/// deciding while events cannot be stored; every store operation's result goes through
/// `StoreHealth`, which says when the state changed (logged once, shown in STATUS and on
/// amber) and when to try the disk again; a corrupt database is moved aside and a fresh
/// one started.
extension GatewayAgent {
    /// How long a statement waits for another process's write lock. Short: the loop
    /// must not stall (a long `outbox` command holds the lock for its length); a commit
    /// that finds the lock taken is retried from a timer instead.
    static let storeBusyTimeoutMillis: Int32 = 50

    static var storeConfiguration: StoreConfiguration {
        StoreConfiguration(busyTimeoutMillis: storeBusyTimeoutMillis)
    }

    // MARK: Hooks at every commit

    /// A store operation reached the disk.
    func storeSucceeded() {
        guard let change = storeHealth.succeeded(at: loop.now) else { return }
        storeHealthChanged(change, error: nil)
    }

    /// A store operation failed. Refusals that are no disk trouble (the outbox's cap)
    /// are the caller's to report.
    func storeFailed(_ error: StoreError) {
        guard let trouble = error.trouble else { return }
        if let change = storeHealth.failed(trouble, at: loop.now) {
            storeHealthChanged(change, error: error)
        }
        storeRetryTimer.arm(at: storeHealth.nextRetry)
    }

    private func storeHealthChanged(_ change: StoreHealth.Change, error: StoreError?) {
        let path = Store.path(stateDirectory: configuration.gateway.stateDirectory)
        if let trouble = change.trouble {
            // A lock is most often an `outbox` command of the operator's, over in a moment.
            log.log(trouble == .locked ? .warning : .error, "events cannot be stored; decisions are kept in memory and retried", [
                "cause": trouble.rawValue, "previous": change.previous?.rawValue ?? "-", "path": path,
                "held_events": "\(core.uncommittedCount)", "error": error?.description ?? "-",
            ])
        } else {
            log.log(.notice, "events are stored again", [
                "cause": change.previous?.rawValue ?? "-", "path": path,
                "after_s": change.lasted.map { "\($0.components.seconds)" } ?? "-",
            ])
        }
        let inTrouble = change.trouble != nil
        fleet.counters.diskTrouble = inTrouble ? 1 : 0
        leds?.update { engine, now in engine.setStoreTrouble(inTrouble, at: now) }
        updateStatus()
    }

    /// The status line's part: `disk trouble: read-only`, or nothing.
    var storeStatusSummary: String? {
        storeHealth.trouble.map { "disk trouble: \($0)" }
    }

    // MARK: Opening

    /// At start: the store, or — when it cannot be opened — the door runs on without it
    /// and tries again on the backoff.
    func openStoreOrRetry() {
        do {
            try openStore()
        } catch {
            switch error {
            case let .store(_, failure): storeFailed(failure)
            case let .stateDirectory(directory, code):
                storeFailed(.file(path: directory, operation: "create the state directory", errno: code))
            }
        }
    }

    /// Where a corrupt database goes: `gateway.sqlite.corrupt-20261124T101500Z`.
    func corruptDatabaseSuffix() -> String {
        let stamp = ISO8601Timestamp.format(millisecondsSinceEpoch: loop.wallMilliseconds)
        // 2026-11-24T10:15:00.123Z → 20261124T101500Z: no colons in a file name.
        let seconds = stamp.prefix(19).filter { $0 != "-" && $0 != ":" }
        return seconds + "Z"
    }

    func announceMovedAside(_ moved: MovedAsideDatabase) {
        fleet.counters.corruption.movedAside &+= 1
        fleet.counters.corruption.salvagedEvents &+= UInt64(moved.salvage.events)
        fleet.counters.corruption.salvagedPresence &+= UInt64(moved.salvage.presence)
        fleet.counters.corruption.unreadableStretches &+= UInt64(moved.salvage.unreadableStretches)
        if moved.salvage.unreadable { fleet.counters.corruption.unreadableFiles &+= 1 }
        log.log(.error, "corrupt database moved aside; a fresh one started", [
            "moved_to": moved.path, "reason": moved.reason, "first_sequence": "\(moved.firstSequence)",
            "salvaged_next_sequence": moved.salvagedNextSequence.map { "\($0)" } ?? "-",
            "salvaged_events": "\(moved.salvage.events)", "salvaged_presence": "\(moved.salvage.presence)",
            "unreadable_stretches": moved.salvage.unreadable ? "all" : "\(moved.salvage.unreadableStretches)",
            "old_copies_removed": "\(moved.copiesRemoved.count)",
        ])
    }

    func announceRecovery(_ recovery: CorruptionRecovery, path: String) {
        switch recovery {
        case .sound:
            fleet.counters.corruption.sound &+= 1
            log.log(.warning, "database reported corrupt is sound; used as it is", ["path": path])
        case let .movedAside(moved):
            announceMovedAside(moved)
        }
    }

    /// Events held over the restart go to a store just opened; a failure is disk trouble
    /// like any other (they are tried again before every write).
    func storeHeldEventsOrRetry() {
        guard heldEvents != nil, store != nil else { return }
        do {
            try storeHeldEvents()
            storeSucceeded()
        } catch {
            storeFailed(error)
        }
    }

    // MARK: Retrying

    /// The disk is tried again: reopened when a fresh connection may help (a file system
    /// remounted, a corrupt file to move aside), then the held decisions are committed,
    /// or — with none held — a small write shows whether the disk takes data again.
    func retryStore() {
        guard let trouble = storeHealth.trouble else { return }
        storeHealth.retrying(at: loop.now)
        if store == nil || trouble.needsReopen || store?.isWritable == false {
            reopenStore(movingAsideCorrupt: trouble == .corrupt)
        }
        if let store {
            if core.uncommittedCount == 0 {
                do {
                    try storeHeldEvents()
                    try store.checkWritable(nowMillis: loop.wallMilliseconds)
                    storeSucceeded()
                } catch {
                    storeFailed(error)
                }
            } else {
                perform(core.retryCommits(at: loop.now))
            }
        }
        storeRetryTimer.arm(at: storeHealth.nextRetry)
    }

    /// Closes the store (and the forwarder reading it) and opens it again; a database a
    /// commit found corrupt is moved aside first.
    private func reopenStore(movingAsideCorrupt: Bool) {
        forwarder?.stop()
        forwarder = nil
        store = nil
        let path = Store.path(stateDirectory: configuration.gateway.stateDirectory)
        if movingAsideCorrupt {
            // Examined first, rebuilt or moved aside with what can be read (Store.recover).
            do {
                let reason = StoreError.corruptRow("an operation found the database damaged")
                // A file found sound once and reported corrupt again is not trusted twice.
                let (recovered, recovery) = try Store.recover(path: path, configuration: Self.storeConfiguration,
                                                             suffix: corruptDatabaseSuffix(), reason: reason,
                                                             examining: !storeFoundSoundBefore)
                announceRecovery(recovery, path: path)
                storeFoundSoundBefore = recovery == .sound
                store = recovered
                storeHealth.reopened()
            } catch {
                storeFailed(error)
                return
            }
        } else {
            openStoreOrRetry()
            if store != nil { storeHealth.reopened() }
        }
        storeHeldEventsOrRetry()
        if !presenceRestored {
            // A store that could not be opened at start: what it holds is restored now, its
            // stored visits checked out ahead of what was decided meanwhile (DoorCore.restore).
            restorePresence()
        } else if store != nil {
            // The file may be a fresh one (a corrupt database moved aside): every record
            // again, so an open visit's record is on disk before a crash could need it.
            perform(core.saveAll(personIds: configuration.persons.map(\.id)))
        }
        if store != nil, configuration.server != nil { startForwarder() }
    }
}
