#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemCalls

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
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try FileDescriptorIO.read(fd, upTo: limit + 1)
        } catch {
            throw Self.error(error.code)
        }
        let filled = bytes.count
        snapshot.isTruncated = filled > limit
        snapshot.bytes = Array(bytes.prefix(limit))
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
