#if canImport(Glibc)
import Glibc
#endif

extension Store {
    /// A consistent copy of the whole outbox at `path`, taken while the agent may be
    /// committing (docs/runbooks.md, "Backing up the outbox"): SQLite's `VACUUM INTO`
    /// reads one snapshot (the last commit before it began) in one read transaction and
    /// writes it as a standalone database, compacted, without a log beside it. The copy is
    /// synced to disk with its directory entry, and the sequence bound beside it
    /// (`FILE-sequence`). An existing file is never replaced.
    public func backup(to path: String) throws(StoreError) {
        guard !StoreFiles.exists(path) else { throw .file(path: path, operation: "create the backup (it exists)", errno: EEXIST) }
        let quoted = "'" + path.replacingAll("'", with: "''") + "'"
        try connection.execute("VACUUM INTO \(quoted)")
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .file(path: path, operation: "open the backup", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .file(path: path, operation: "sync the backup", errno: errno) }
        // The bound above every sequence handed out goes with it: a restored outbox must
        // not reuse a sequence (docs/event-api.md, `sequence`).
        if let bound = SequenceFloor.read(self.path + SequenceFloor.suffix) {
            try StoreFiles.replaceDurably(path + SequenceFloor.suffix, with: "\(bound)\n")
        }
        try StoreFiles.syncDirectory(StoreFiles.directory(of: path))
    }
}

private extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
