#if canImport(Glibc)
import Glibc
#endif

/// Why the disk cannot take events, coarse enough for an LED, a status line and one log
/// line per change (docs/reliability.md, "Disk trouble").
public enum StoreTrouble: String, Hashable, Sendable, CustomStringConvertible {
    /// No space left (SQLITE_FULL, ENOSPC).
    case full = "disk full"
    /// The file system or the file is read-only (SQLITE_READONLY, EROFS, EACCES).
    case readOnly = "read-only"
    /// The database is damaged, truncated or not SQLite at all: it is moved aside.
    case corrupt = "corrupt database"
    /// Another process holds the database's write lock (SQLITE_BUSY, SQLITE_LOCKED).
    case locked = "locked"
    /// Any other failure of the disk or the file (SQLITE_IOERR, SQLITE_CANTOPEN, …), or a
    /// database this gateway cannot use (written by a newer one).
    case io = "I/O error"

    public var description: String { rawValue }

    /// Whether only a fresh connection may cure it: a corrupt file to move aside, a
    /// replaced disk. A lock or a full disk clears on the same connection, and so does a
    /// file system remounted read-write — unless SQLite opened the file read-only
    /// (`Store.isWritable`).
    public var needsReopen: Bool {
        switch self {
        case .corrupt, .io: true
        case .readOnly, .full, .locked: false
        }
    }
}

extension StoreError {
    /// The disk trouble behind this error; `nil` for a refusal that is no disk trouble
    /// (the outbox's cap, a nested transaction).
    public var trouble: StoreTrouble? {
        switch self {
        case let .open(_, _, code, systemErrno): SQLiteConnection.trouble(code: code, systemErrno: systemErrno) ?? .io
        case let .sqlite(code, _, systemErrno): SQLiteConnection.trouble(code: code, systemErrno: systemErrno)
        case .corruptRow, .notADatabase: .corrupt
        case let .file(_, _, code): SQLiteConnection.trouble(code: 0, systemErrno: code) ?? .io
        case .unsupportedSchema, .schemaUpgradePending, .noOutbox: .io
        case .outboxFull, .nestedTransaction: nil
        }
    }

    static func errnoName(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text) + " (errno \(code))"
    }
}
