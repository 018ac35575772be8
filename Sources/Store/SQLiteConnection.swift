#if canImport(Glibc)
import Glibc
#endif
import CSQLite

/// The only file that talks to SQLite's C API: one connection, its prepared statements,
/// and SQLite's result codes turned into `StoreError`.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    private let path: String

    init(path: String, busyTimeoutMillis: Int32, readOnly: Bool = false) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        // NOMUTEX: the store is used from one thread (the event loop); no need for
        // SQLite's serialisation. The directory must exist: creating it is the installer's job.
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let rc = sqlite3_open_v2(path, &db, access | SQLITE_OPEN_NOMUTEX, nil)
        if readOnly, rc == SQLITE_CANTOPEN {
            sqlite3_close_v2(db)
            throw .noOutbox(path: path)
        }
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let systemErrno = Self.fileSystemErrno(rc, db.map { sqlite3_system_errno($0) } ?? 0, path: path)
            sqlite3_close_v2(db)
            throw .open(path: path, message: message, code: rc & 0xFF, systemErrno: systemErrno)
        }
        handle = db
        sqlite3_extended_result_codes(db, 0)
        sqlite3_busy_timeout(db, busyTimeoutMillis)
    }

    deinit {
        // Statements are finalised by their owners first; close_v2 defers if any remain.
        sqlite3_close_v2(handle)
    }

    var lastErrorMessage: String {
        guard let handle else { return "closed" }
        return String(cString: sqlite3_errmsg(handle))
    }

    func error(_ code: Int32) -> StoreError {
        let systemErrno = Self.fileSystemErrno(code, handle.map { sqlite3_system_errno($0) } ?? 0, path: path)
        return .sqlite(code: code & 0xFF, message: lastErrorMessage, systemErrno: systemErrno)
    }

    /// The errno that says why a file operation failed. SQLite's own may belong to
    /// another call (opening `-shm` beside a database on a read-only mount reports
    /// "unable to open database file"); for a failure of the file the directory's file
    /// system is asked whether it is read-only or out of space, the two states the agent
    /// shows and waits out (docs/reliability.md, "Disk trouble").
    static func fileSystemErrno(_ code: Int32, _ reported: Int32, path: String) -> Int32 {
        guard reported != EROFS, reported != ENOSPC else { return reported }
        switch code & 0xFF {
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_FULL: break
        default: return reported
        }
        var info = statvfs()
        guard statvfs(StoreFiles.directory(of: path), &info) == 0 else { return reported }
        if info.f_flag & UInt(ST_RDONLY) != 0 { return EROFS }
        if info.f_bavail == 0 { return ENOSPC }
        return reported
    }

    /// The disk trouble behind a result code. The system's errno is looked at first:
    /// SQLite reports a write refused by a read-only or full file system as a plain I/O
    /// error. `nil` when the code is no disk trouble (a constraint, a misuse).
    static func trouble(code: Int32, systemErrno: Int32) -> StoreTrouble? {
        switch systemErrno {
        case ENOSPC, EDQUOT: return .full
        case EROFS, EACCES, EPERM: return .readOnly
        default: break
        }
        switch code & 0xFF {
        case SQLITE_FULL: return .full
        case SQLITE_READONLY: return .readOnly
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: return .locked
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_PROTOCOL, SQLITE_NOLFS, SQLITE_PERM: return .io
        case SQLITE_OK: return systemErrno == 0 ? nil : .io
        default: return nil
        }
    }

    /// Runs one or more statements without results (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc) }
        return SQLiteStatement(connection: self, statement: statement)
    }

    /// Rows changed by the last INSERT/UPDATE/DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// SQLite virtual-machine steps run by this connection's prepared statements: the
    /// work a query did (rows visited, index probes), counted, not timed, so tests can
    /// show what stays flat as the table grows.
    fileprivate(set) var virtualMachineSteps = 0
    /// Whether SQLite opened the file read-only (it falls back to that when the file or
    /// its file system refuses writing): such a connection never writes again, even once
    /// the file system is remounted read-write.
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }
}

/// A prepared statement, reset after every use so it can be run again.
final class SQLiteStatement {
    private unowned let connection: SQLiteConnection
    private let statement: OpaquePointer

    fileprivate init(connection: SQLiteConnection, statement: OpaquePointer) {
        self.connection = connection
        self.statement = statement
    }

    deinit { sqlite3_finalize(statement) }

    /// SQL values as this store uses them.
    enum Value {
        case integer(Int64)
        case text(String)
        case blob([UInt8])
        case null
    }

    func bind(_ values: [Value]) throws(StoreError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case let .integer(v): rc = sqlite3_bind_int64(statement, index, v)
            case let .text(v): rc = sqlite3_bind_text(statement, index, v, -1, csqlite_transient())
            case let .blob(v):
                rc = v.withUnsafeBytes { raw in
                    // A zero-length blob still needs a non-nil pointer to be a blob, not NULL.
                    sqlite3_bind_blob(statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), csqlite_transient())
                }
            case .null: rc = sqlite3_bind_null(statement, index)
            }
            guard rc == SQLITE_OK else { throw connection.error(rc) }
        }
    }

    /// Steps once: `true` when a row is available.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(statement)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let failure = connection.error(rc)
            sqlite3_reset(statement)
            throw failure
        }
    }

    /// Binds, runs to completion, resets.
    func run(_ values: [Value] = []) throws(StoreError) {
        try bind(values)
        defer { reset() }
        while try step() {}
    }

    /// Binds and calls `row` for every result row, then resets. `row` returns `false` to stop early.
    func query(_ values: [Value] = [], _ row: (SQLiteStatement) throws(StoreError) -> Bool) throws(StoreError) {
        try bind(values)
        defer { reset() }
        while try step() {
            guard try row(self) else { break }
        }
    }

    private func reset() {
        sqlite3_reset(statement)
        connection.virtualMachineSteps += Int(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 1))
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        // Decoded with repair: a damaged file must not trap.
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func blob(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(statement, column) else { return [] }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
