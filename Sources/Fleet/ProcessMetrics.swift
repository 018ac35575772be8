#if canImport(Glibc)
import Glibc
#endif
import CLinux
import EventLoop

/// The process's own figures and the kernel's clock state, read only when a snapshot is
/// taken.
public enum ProcessMetrics {
    /// CPU time and resident memory now; the start time is the caller's (taken at start).
    public static func read(startTimeSeconds: Double) -> ProcessSnapshot {
        ProcessSnapshot(cpuSeconds: ProcessCPUTime.seconds(), residentBytes: residentBytes(), startTimeSeconds: startTimeSeconds)
    }

    /// The second field of /proc/self/statm (pages), in bytes; 0 when unreadable.
    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { _ = close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
