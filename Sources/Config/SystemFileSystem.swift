#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system, through open(2), fstat(2) and read(2) on one descriptor, so the
/// mode checked is the mode of the file whose bytes are used.
public struct SystemFileSystem: ConfigurationFileSystem {
    public init() {}

    public func read(_ path: String, limit: Int) throws(FileAccessError) -> FileSnapshot {
        // O_NONBLOCK: a FIFO named as a secret file must not hang start-up in open(2).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw Self.error(errno) }
        defer { close(fd) }

        var status = stat()
        guard fstat(fd, &status) == 0 else { throw Self.error(errno) }
        let isRegular = (status.st_mode & S_IFMT) == S_IFREG
        var snapshot = FileSnapshot(isRegularFile: isRegular, permissions: UInt32(status.st_mode) & 0o7777)
        guard isRegular, limit > 0 else { return snapshot }

        // Read one byte past the limit to learn whether the file is longer.
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled < buffer.count {
            let count = buffer.withUnsafeMutableBytes { raw in
                systemRead(fd, raw.baseAddress.map { $0 + filled }, raw.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.error(errno)
            }
            if count == 0 { break }
            filled += count
        }
        snapshot.isTruncated = filled > limit
        snapshot.bytes = Array(buffer[0 ..< min(filled, limit)])
        return snapshot
    }

    private static func error(_ code: Int32) -> FileAccessError {
        switch code {
        case ENOENT, ENOTDIR: .notFound
        case EACCES, EPERM: .permissionDenied
        default: .other(errno: code, description: String(cString: strerror(code)))
        }
    }
}

/// read(2), under a name the method above does not shadow.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
