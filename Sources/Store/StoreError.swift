import SystemCalls

/// What went wrong in the store, with SQLite's own words where it had any.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database could not be opened or created (missing directory, permissions, a
    /// read-only file system). `code` is SQLite's primary result code, `systemErrno` the
    /// errno of the system call that failed (0 when none did).
    case open(path: String, message: String, code: Int32 = 0, systemErrno: Int32 = 0)
    /// Opened for inspection only, and there is no outbox at the path yet: nothing was
    /// created (a root-owned file there would lock out the service).
    case noOutbox(path: String)
    /// The file was written by a newer gateway (its schema version is higher than ours).
    case unsupportedSchema(found: Int32, supported: Int32)
    /// Opened for inspection only, and the file has an older schema: only a writer (the
    /// agent at its start) upgrades it.
    case schemaUpgradePending(found: Int32, current: Int32)
    /// A statement failed; `code` is SQLite's primary result code, `systemErrno` the errno
    /// behind it (0 when none).
    case sqlite(code: Int32, message: String, systemErrno: Int32 = 0)
    /// Undelivered events reached `StoreConfiguration.maximumEvents`: the new event was
    /// refused, not stored. Never silent: the caller logs it loudly and shows amber.
    case outboxFull(undelivered: Int, maximum: Int)
    /// `commit` was called from inside a transaction body.
    case nestedTransaction
    /// A value read back from the file is not what this gateway writes (a damaged or
    /// foreign database): counted and reported, never trusted.
    case corruptRow(String)
    /// The file at the store's path is not a sound SQLite database (its header, or its
    /// length against the header): found before SQLite is asked to trust it.
    case notADatabase(path: String, reason: String)
    /// A file beside the database (the sequence floor, the state directory) could not be
    /// written or synced.
    case file(path: String, operation: String, errno: Int32)

    public var description: String {
        switch self {
        case let .open(path, message, _, _): "cannot open the store \(path): \(message)"
        case let .noOutbox(path): "there is no outbox yet at \(path) (the agent creates it when it first runs)"
        case let .unsupportedSchema(found, supported):
            "the store has schema version \(found), newer than this gateway's \(supported); upgrade the gateway"
        case let .schemaUpgradePending(found, current):
            "the store has schema version \(found); the agent upgrades it to \(current) when it starts"
        case let .sqlite(code, message, _): "SQLite error \(code): \(message)"
        case let .outboxFull(undelivered, maximum):
            "the outbox is full (\(undelivered) undelivered events, maximum \(maximum)): new events are refused until the server takes the backlog"
        case .nestedTransaction: "a store transaction was opened inside another"
        case let .corruptRow(what): "unexpected data in the store: \(what)"
        case let .notADatabase(path, reason): "\(path) is not a sound SQLite database: \(reason)"
        case let .file(path, operation, code): "cannot \(operation) \(path): \(StoreError.errnoName(code))"
        }
    }
}

extension StoreError {
    /// A failed call on one of the store's own files (not SQLite's).
    init(_ failure: SystemCallFailure) {
        self = .file(path: failure.path, operation: failure.operation, errno: failure.errno.code)
    }
}
