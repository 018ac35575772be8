#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// Writes the metrics for node_exporter's textfile collector: to `PATH.tmp` beside it,
/// then renamed over `PATH`, so the collector never reads half a file. No fsync: after
/// a crash a stale or missing metrics file is harmless and the next write replaces it.
public enum TextfileWriter {
    public static func write(_ text: String, to path: String) throws(FleetFileError) {
        // World-readable whatever the umask (the unit's is 0077): node_exporter runs as
        // another user, and metrics hold no secret.
        do throws(SystemCallFailure) {
            try AtomicFile.replace(path, with: Array(text.utf8), mode: 0o644, durability: .replaceOnly)
        } catch {
            throw FleetFileError(error.description)
        }
    }
}
