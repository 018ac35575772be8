#if canImport(Glibc)
import Glibc
#endif

/// Writes the metrics for node_exporter's textfile collector: to `PATH.tmp` beside it,
/// then renamed over `PATH`, so the collector never reads half a file. No fsync: after
/// a crash a stale or missing metrics file is harmless and the next write replaces it.
public enum TextfileWriter {
    public static func write(_ text: String, to path: String) throws(LocalServerError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw LocalServerError("cannot write \(temporary)", errno: errno) }
        // World-readable whatever the umask (the unit's is 0077): node_exporter runs as
        // another user, and metrics hold no secret.
        _ = fchmod(fd, 0o644)
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                _ = close(fd)
                _ = unlink(temporary)
                throw LocalServerError("cannot write \(temporary)", errno: code)
            }
            written += count
        }
        guard close(fd) == 0 else {
            let code = errno
            _ = unlink(temporary)
            throw LocalServerError("cannot write \(temporary)", errno: code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            _ = unlink(temporary)
            throw LocalServerError("cannot rename \(temporary) to \(path)", errno: code)
        }
    }
}
