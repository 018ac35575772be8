/// A database that was moved aside because it is corrupt.
public struct MovedAsideDatabase: Hashable, Sendable {
    /// Where the damaged file is kept, for inspection (never deleted).
    public var path: String
    /// What was wrong with it.
    public var reason: String
    /// The next sequence its `meta` table or its events still showed, when it could be
    /// read at all.
    public var salvagedNextSequence: Int64?
    /// The first sequence the fresh database hands out.
    public var firstSequence: Int64
    /// What was copied out of it into the fresh one.
    public var salvage = SalvageReport()
    /// Older set-aside copies removed to keep within `StoreFiles.setAsideLimit`.
    public var copiesRemoved: [String] = []
}

/// What recovering a database reported as corrupt did.
public enum CorruptionRecovery: Equatable, Sendable {
    /// The file was sound after all (the error did not come from its structure).
    case sound
    /// Moved aside, a fresh one made, what could be read copied over.
    case movedAside(MovedAsideDatabase)
}

extension Store {
    /// Opens the store at `path`; a database found corrupt (not SQLite, truncated,
    /// damaged) is moved aside to `<path>.corrupt-<suffix>` and a fresh one created
    /// that continues above every sequence the old one may have handed out.
    public static func openRecovering(
        path: String, configuration: StoreConfiguration = .init(), suffix: String
    ) throws(StoreError) -> (store: Store, movedAside: MovedAsideDatabase?) {
        do {
            return (try Store(path: path, configuration: configuration), nil)
        } catch {
            guard error.trouble == .corrupt else { throw error }
            let (store, recovery) = try recover(path: path, configuration: configuration, suffix: suffix, reason: error)
            if case let .movedAside(moved) = recovery { return (store, moved) }
            return (store, nil)
        }
    }

    /// A database found corrupt (at open, by a commit, by the forwarder's reads), with no
    /// connection of this process open on it: examined first (`examining`: not when the
    /// same file was found sound before and reported corrupt again) and kept when sound;
    /// else moved aside, a fresh one made, and every undelivered event and presence record
    /// still readable copied over; older set-aside copies beyond the limit removed.
    public static func recover(path: String, configuration: StoreConfiguration = .init(), suffix: String,
                               reason: StoreError, examining: Bool = true) throws(StoreError) -> (Store, CorruptionRecovery) {
        if examining, StoreFiles.exists(path), (try? StoreFiles.checkHeader(path: path)) != nil, examine(path: path) == .sound {
            do {
                return (try Store(path: path, configuration: configuration), .sound)
            } catch {
                // Sound to integrity_check, yet it does not open as a store: it goes.
                guard error.trouble == .corrupt else { throw error }
            }
        }
        guard var moved = try moveAside(path: path, suffix: suffix, reason: reason) else {
            return (try Store(path: path, configuration: configuration), .sound)
        }
        let store = try Store(path: path, configuration: configuration)
        moved.salvage = store.salvage(from: moved.path, upTo: moved.salvagedNextSequence.map { $0 &- 1 })
        moved.copiesRemoved = StoreFiles.removeOldSetAsideCopies(databasePath: path, keeping: moved.path)
        return (store, .movedAside(moved))
    }

    /// Moves a corrupt database aside (the agent's store connection closed first). The
    /// sequence floor is raised before anything moves, so a failure leaves the database
    /// where it was and the next attempt salvages again.
    /// - Returns: `nil` when there is no database file to move.
    public static func moveAside(path: String, suffix: String, reason: StoreError) throws(StoreError) -> MovedAsideDatabase? {
        guard StoreFiles.exists(path) else { return nil }
        var floor = SequenceFloor(databasePath: path)
        let salvaged = salvageNextSequence(path: path)
        if let salvaged {
            // Without the floor file, events in the unreadable part may have gone past
            // what is still readable: a margin of one reservation range covers them.
            let known = SequenceFloor.read(floor.path) != nil
            try floor.raise(to: known ? salvaged : salvaged + SequenceFloor.range)
        }
        let target = try StoreFiles.moveAside(path: path, suffix: suffix)
        return MovedAsideDatabase(path: target, reason: reason.description, salvagedNextSequence: salvaged,
                                  firstSequence: max(1, floor.reserved))
    }

    /// The next sequence a damaged database still shows (the larger of its counter and
    /// its highest event + 1), read without changing it; `nil` when nothing can be read.
    static func salvageNextSequence(path: String) -> Int64? {
        guard let connection = try? SQLiteConnection(path: path, busyTimeoutMillis: 0, readOnly: true) else { return nil }
        var best: Int64?
        for sql in ["SELECT int_value FROM meta WHERE name = 'next_sequence'", "SELECT max(sequence) + 1 FROM events"] {
            guard let statement = try? connection.prepare(sql) else { continue }
            try? statement.query { row in
                if !row.isNull(0) { best = max(best ?? 0, row.int64(0)) }
                return false
            }
        }
        return best
    }
}

extension Store {
    /// Whether this connection can write at all (see `SQLiteConnection.isReadOnly`).
    public var isWritable: Bool { !connection.isReadOnly }

    /// One small durable write (a timestamp in `meta`): whether the disk takes data
    /// again, when no held event is there to show it. Only while in trouble.
    public func checkWritable(nowMillis: Int64) throws(StoreError) {
        try commit { (_: inout StoreTransaction) throws(StoreError) in
            try statements.setMetaInt.run([.text("disk_checked_ms"), .integer(nowMillis)])
        }
    }
}
