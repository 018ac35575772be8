/// A bound above every sequence the store may have handed out, kept in a small file
/// beside the database (`gateway.sqlite-sequence`), so a database that had to be moved
/// aside (corrupt, lost) never lets a fresh one reuse a sequence.
///
/// Sequences are reserved in ranges: when an append reaches the bound, the file is
/// replaced durably with `next + range` *before* the transaction that uses it commits.
/// Two fsyncs per `range` events, none per event (docs/reliability.md, "Disk trouble").
/// Appends happen under the database's write lock, so two processes (the agent and
/// `outbox enqueue`) write the file in turn, each a value above the other's.
struct SequenceFloor {
    static let suffix = "-sequence"
    static let range: Int64 = 1024

    let path: String
    /// Sequences below this may have been handed out; 0 when the file is missing.
    private(set) var reserved: Int64

    init(databasePath: String) {
        path = databasePath + Self.suffix
        reserved = Self.read(path) ?? 0
    }

    static func read(_ path: String) -> Int64? {
        guard let text = StoreFiles.readText(path) else { return nil }
        return Int64(text.split(separator: "\n").first.map(String.init) ?? "")
    }

    /// Makes sure `sequence` lies below the stored bound.
    mutating func cover(_ sequence: Int64) throws(StoreError) {
        guard sequence >= reserved else { return }
        try raise(to: sequence + Self.range)
    }

    /// Stores `bound` if it is above the current one.
    mutating func raise(to bound: Int64) throws(StoreError) {
        guard bound > reserved else { return }
        try StoreFiles.replaceDurably(path, with: "\(bound)\n")
        reserved = bound
    }
}
