/// The gateway's durable state in one SQLite file: the outbox of events (with the
/// gateway's sequence), each event's delivery to every sink (docs/event-api.md, "Sinks"),
/// and the persisted presence records.
///
/// One connection, used from one thread (the event loop); other processes (the `outbox`
/// command) may open the same file at the same time: WAL lets them read while the agent
/// writes, and `busy_timeout` makes writers wait for each other instead of failing.
///
/// Durability (see docs/event-api.md): event commits run with `synchronous=FULL`, so a commit that
/// returned survives a power cut. Delivery bookkeeping (sent, retry) runs with
/// `synchronous=NORMAL`: after a power cut it may be lost, which only means an event is
/// sent once more under the same idempotency key and the server answers 200.
public final class Store {
    /// The file name inside `gateway.state_dir`.
    public static let fileName = "gateway.sqlite"
    /// The schema this code writes (`PRAGMA user_version`; `StoreSchema`).
    public static let schemaVersion: Int32 = StoreSchema.version

    public let path: String
    public let configuration: StoreConfiguration
    let connection: SQLiteConnection
    let statements: Statements
    /// Events and deliveries per state (see `OutboxCounts`); nil until first counted.
    var stateCounts: OutboxCounts?
    /// `PRAGMA data_version` when `stateCounts` was counted.
    var stateCountsDataVersion: Int64 = 0
    /// The bound above every sequence handed out, kept beside the database.
    var sequenceFloor: SequenceFloor
    private var inTransaction = false
    private var lastDataVersion: Int64 = 0

    /// The path of the store inside a state directory.
    public static func path(stateDirectory: String) -> String {
        stateDirectory.hasSuffix("/") ? stateDirectory + fileName : stateDirectory + "/" + fileName
    }

    /// Opens (creating if needed) the store at `path`. The directory must exist.
    ///
    /// `readOnly` is for inspection: nothing is created or changed, and a missing or empty
    /// file is `StoreError.noOutbox`.
    public init(path: String, configuration: StoreConfiguration = .init(), readOnly: Bool = false) throws(StoreError) {
        self.path = path
        self.configuration = configuration
        sequenceFloor = SequenceFloor(databasePath: path)
        if !readOnly { try StoreFiles.checkHeader(path: path) }
        let isNew = !StoreFiles.exists(path)
        connection = try SQLiteConnection(path: path, busyTimeoutMillis: configuration.busyTimeoutMillis, readOnly: readOnly)
        if readOnly {
            let version = try Self.schemaVersion(of: connection)
            if version == 0 { throw .noOutbox(path: path) }
            if version > Self.schemaVersion { throw .unsupportedSchema(found: version, supported: Self.schemaVersion) }
            // Only a writer upgrades the file (the agent at its next start).
            if version < Self.schemaVersion { throw .schemaUpgradePending(found: version, current: Self.schemaVersion) }
            statements = try Statements(connection)
            return
        }
        // cache_size: 512 KiB instead of SQLite's 2 MiB. The outbox is appended at its end
        // and read from its oldest undelivered row, so few pages are hot; the kernel's page
        // cache holds the rest of the file anyway, and on a Pi the agent's memory is what
        // counts (the peak RSS target: docs/benchmarks.md).
        // auto_vacuum: a new file gives pruned rows' pages back (`releaseFreePages`); on a
        // file that already has tables it changes nothing. journal_size_limit: the WAL
        // returns to 4 MiB after a checkpoint instead of keeping its high-water size.
        try connection.execute("""
            PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF;
            PRAGMA cache_size=-512; PRAGMA journal_size_limit=4194304;
            """)
        // A fresh database (first start, or one moved aside) continues above every
        // sequence the floor says may have been handed out.
        try Self.migrate(connection, firstSequence: max(1, sequenceFloor.reserved))
        // The new file's directory entry, so a power cut cannot lose the file itself.
        if isNew { try StoreFiles.syncDirectory(StoreFiles.directory(of: path)) }
        statements = try Statements(connection)
        lastDataVersion = try dataVersion()
    }

    private static func schemaVersion(of connection: SQLiteConnection) throws(StoreError) -> Int32 {
        let version = try connection.prepare("PRAGMA user_version")
        var found: Int32 = 0
        try version.query { row in
            found = Int32(truncatingIfNeeded: row.int64(0))
            return false
        }
        return found
    }

    /// Brings the file to `schemaVersion`. An old file takes one step per version, each one
    /// transaction with its version stamp, so a crash or a kill half-way leaves the version
    /// before it and the next start simply migrates again. A new file is made as version 1
    /// and upgraded by the same steps (`StoreSchema`), all in the one transaction that stamps
    /// the current version: a reader (`outbox export` while the agent starts) never finds
    /// a new file at an older version. `afterStatement` is for the tests that stop a
    /// migration half-way (told the version the transaction stamps and each statement's
    /// index within it).
    static func migrate(_ connection: SQLiteConnection, firstSequence: Int64,
                        afterStatement: (_ step: Int32, _ index: Int) throws(StoreError) -> Void = { _, _ throws(StoreError) in }) throws(StoreError) {
        var found = try schemaVersion(of: connection)
        if found > schemaVersion { throw .unsupportedSchema(found: found, supported: schemaVersion) }
        while found < schemaVersion {
            let to = found == 0 ? schemaVersion : found + 1
            try connection.execute("BEGIN IMMEDIATE")
            do {
                var statements: [String] = []
                if found == 0 {
                    statements.append(StoreSchema.version1(firstSequence: firstSequence))
                    statements.append(contentsOf: StoreSchema.steps)
                } else {
                    statements.append(StoreSchema.steps[Int(to) - 2])
                }
                statements.append("PRAGMA user_version = \(to)")
                for (index, sql) in statements.enumerated() {
                    try connection.execute(sql)
                    try afterStatement(to, index)
                }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
            found = to
        }
    }

    // MARK: Transactions

    /// Runs `body` as one atomic transaction: the events it appends (each with its
    /// sequence) and the presence records it saves are all stored, or none is.
    ///
    /// Returns once the transaction is on disk (`synchronous=FULL`).
    public func commit(_ body: (inout StoreTransaction) throws(StoreError) -> Void) throws(StoreError) {
        guard !inTransaction else { throw .nestedTransaction }
        inTransaction = true
        defer { inTransaction = false }
        try connection.execute("BEGIN IMMEDIATE")
        var transaction = StoreTransaction(store: self)
        do {
            try body(&transaction)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        let appended = transaction.appended
        committedStateChanges { $0.appended(appended) }
    }

    /// A transaction for bookkeeping whose loss after a power cut is harmless.
    func relaxedTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        guard !inTransaction else { throw .nestedTransaction }
        inTransaction = true
        defer { inTransaction = false }
        // FULL is restored on every way out, a failed BEGIN included: otherwise the next
        // event commits would return before their data reached the disk.
        try connection.execute("PRAGMA synchronous=NORMAL")
        defer { try? connection.execute("PRAGMA synchronous=FULL") }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Presence

    /// Every saved presence record: person id → the bytes the presence layer saved.
    public func loadPresence() throws(StoreError) -> [String: [UInt8]] {
        var records: [String: [UInt8]] = [:]
        try statements.loadPresence.query { row in
            records[row.text(0)] = row.blob(1)
            return true
        }
        return records
    }

    // MARK: Other processes

    /// Whether another connection (another process) committed since the last call: the
    /// forwarder polls this to notice `outbox retry-dead` or events appended elsewhere.
    public func hasExternalChanges() throws(StoreError) -> Bool {
        let version = try dataVersion()
        defer { lastDataVersion = version }
        return version != lastDataVersion
    }

    func dataVersion() throws(StoreError) -> Int64 {
        var version: Int64 = 0
        try statements.dataVersion.query { row in
            version = row.int64(0)
            return false
        }
        return version
    }

    /// Checks the file: `PRAGMA integrity_check`'s answer, "ok" when sound.
    public func integrityCheck() throws(StoreError) -> String {
        let check = try connection.prepare("PRAGMA integrity_check")
        var lines: [String] = []
        try check.query { row in
            lines.append(row.text(0))
            return lines.count < 20
        }
        return lines.joined(separator: "\n")
    }
}
