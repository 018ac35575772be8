#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file whole: the new content goes to `PATH.tmp` beside it and is renamed
/// over `PATH`, so a reader (or a restart after a crash) sees the old content or the new,
/// never part. With `.durable` the temporary file is fsynced before the rename and the
/// directory after it, so a power cut keeps the same promise (docs/reliability.md).
public enum AtomicFile {
    public enum Durability: Hashable, Sendable {
        /// fsync the file and its directory: state the agent trusts after a power cut.
        case durable
        /// Rename only: files that are rewritten soon and harmless when stale (metrics).
        case replaceOnly
    }

    /// Writes `bytes` to `path` with exactly `mode` (whatever the umask, and also when a
    /// stale temporary file was left with another mode). Symbolic links are not followed.
    /// On failure the temporary file is removed and `path` is as it was.
    public static func replace(
        _ path: String, with bytes: some Collection<UInt8>, mode: mode_t, durability: Durability
    ) throws(SystemCallFailure) {
        let temporary = path + ".tmp"
        let fd = SystemCall.retryingInterrupts {
            open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        }
        guard fd >= 0 else { throw SystemCallFailure("create", temporary, .current) }
        var failure: SystemCallFailure?
        if fchmod(fd, mode) != 0 {
            failure = SystemCallFailure("set the mode of", temporary, .current)
        } else {
            do throws(Errno) {
                try FileDescriptorIO.writeAll(fd, bytes)
            } catch {
                failure = SystemCallFailure("write", temporary, error)
            }
        }
        if failure == nil, durability == .durable, fsync(fd) != 0 {
            failure = SystemCallFailure("sync", temporary, .current)
        }
        // close can report a deferred write error (NFS, some FUSE file systems).
        if close(fd) != 0, failure == nil { failure = SystemCallFailure("write", temporary, .current) }
        if failure == nil, rename(temporary, path) != 0 {
            failure = SystemCallFailure("rename over \(path)", temporary, .current)
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
        if durability == .durable { try syncDirectory(directory(of: path)) }
    }

    /// Makes an entry created, renamed or removed in `directory` survive a power cut: a
    /// file's own fsync does not cover its directory entry.
    public static func syncDirectory(_ directory: String) throws(SystemCallFailure) {
        let fd = SystemCall.retryingInterrupts { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemCallFailure("open the directory", directory, .current) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemCallFailure("sync the directory", directory, .current) }
    }

    /// The directory holding `path` ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
