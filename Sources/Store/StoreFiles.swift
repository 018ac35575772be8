#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// The files beside the database and the checks made on it before SQLite is asked to
/// trust it: the SQLite header, moving a damaged database aside, syncing the directory.
/// Plain system calls; the SQLite C API stays in `SQLiteConnection`.
enum StoreFiles {
    /// The directory holding `path` ("." for a bare name).
    static func directory(of path: String) -> String { AtomicFile.directory(of: path) }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Makes a file created, renamed or removed in `directory` survive a power cut: the
    /// file's own fsync does not cover its directory entry.
    static func syncDirectory(_ directory: String) throws(StoreError) {
        do throws(SystemCallFailure) {
            try AtomicFile.syncDirectory(directory)
        } catch {
            throw StoreError(error)
        }
    }

    /// Writes `text` to `path` atomically and durably: a temporary file, fsync, rename,
    /// fsync of the directory. A power cut leaves the old or the new content, never part.
    static func replaceDurably(_ path: String, with text: String) throws(StoreError) {
        do throws(SystemCallFailure) {
            try AtomicFile.replace(path, with: Array(text.utf8), mode: 0o640, durability: .durable)
        } catch {
            throw StoreError(error)
        }
    }

    /// The whole (small) file as text; `nil` when it cannot be read.
    static func readText(_ path: String, limit: Int = 64) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, limit) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0 ..< count], as: UTF8.self)
    }

    // MARK: The SQLite header

    /// Refuses a file that is certainly not a sound SQLite database: too short for a
    /// header, another format, an impossible page size, or shorter than the page count
    /// its header vouches for (a truncated copy). A missing or empty file passes (SQLite
    /// creates the database in it). Costs one read of 100 bytes.
    static func checkHeader(path: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        // Not readable: SQLite's own open reports why, classified.
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        let size = Int64(info.st_size)
        if size == 0 { return }
        var header = [UInt8](repeating: 0, count: 100)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 100, 0) }
        guard count == 100 else {
            throw .notADatabase(path: path, reason: "\(size) bytes, shorter than a SQLite header")
        }
        guard header[0 ..< 16].elementsEqual(Array("SQLite format 3".utf8) + [0]) else {
            throw .notADatabase(path: path, reason: "no SQLite header")
        }
        let rawPageSize = Int64(header[16]) << 8 | Int64(header[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            throw .notADatabase(path: path, reason: "page size \(rawPageSize) in the header")
        }
        func bigEndian32(_ offset: Int) -> Int64 {
            Int64(header[offset]) << 24 | Int64(header[offset + 1]) << 16 | Int64(header[offset + 2]) << 8 | Int64(header[offset + 3])
        }
        // The page count is trusted only when its "valid for" stamp matches the change
        // counter (what SQLite itself requires), and only without a write-ahead log: a
        // checkpoint cut short leaves the file shorter until the log is replayed.
        let pageCount = bigEndian32(28)
        let countIsValid = bigEndian32(92) == bigEndian32(24)
        if countIsValid, pageCount > 0, (Self.size(path + "-wal") ?? 0) == 0, size < pageCount * pageSize {
            throw .notADatabase(
                path: path, reason: "truncated: \(size) bytes, its header says \(pageCount) pages of \(pageSize) bytes")
        }
    }

    // MARK: Moving a damaged database aside

    /// Renames the database and its `-wal` and `-shm` files to `<path>.corrupt-<suffix>`
    /// (the log files keep SQLite's naming beside it, so the copy opens as it was), and
    /// syncs the directory. Nothing is deleted.
    ///
    /// - Returns: the new name of the database file.
    static func moveAside(path: String, suffix: String) throws(StoreError) -> String {
        var target = path + ".corrupt-" + suffix
        var attempt = 1
        while exists(target) {
            attempt += 1
            target = path + ".corrupt-" + suffix + "-\(attempt)"
        }
        for extra in ["-wal", "-shm", ""] where exists(path + extra) {
            guard rename(path + extra, target + extra) == 0 else {
                throw .file(path: path + extra, operation: "move aside", errno: errno)
            }
        }
        try syncDirectory(directory(of: path))
        return target
    }

    /// Set-aside copies of a corrupt database kept for inspection: the newest few, within
    /// a disk budget, so a card that keeps failing does not fill itself with them.
    static let setAsideLimit = (copies: 3, bytes: Int64(256 << 20))

    /// Removes the oldest `<database>.corrupt-*` copies (with their `-wal` and `-shm`)
    /// beyond `setAsideLimit`; `keeping` (the newest) always stays. Returns the names removed.
    static func removeOldSetAsideCopies(databasePath path: String, keeping newest: String) -> [String] {
        let directory = directory(of: path)
        let prefix = String(path.dropFirst(directory.count).drop { $0 == "/" }) + ".corrupt-"
        guard let listing = opendir(directory) else { return [] }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(prefix), !name.hasSuffix("-wal"), !name.hasSuffix("-shm") { names.append(name) }
        }
        closedir(listing)
        // Newest first: the suffix is a UTC time (then -2, -3 for the same second).
        let copies = names.map { directory + "/" + $0 }.sorted { $0 > $1 }
        var removed: [String] = []
        var kept = 0
        var bytes: Int64 = 0
        for copy in copies {
            let size = ["", "-wal", "-shm"].reduce(Int64(0)) { $0 + (self.size(copy + $1) ?? 0) }
            if copy == newest || (kept < setAsideLimit.copies && bytes + size <= setAsideLimit.bytes) {
                kept += 1
                bytes += size
                continue
            }
            for extra in ["-wal", "-shm", ""] { unlink(copy + extra) }
            removed.append(copy)
        }
        return removed
    }
}
