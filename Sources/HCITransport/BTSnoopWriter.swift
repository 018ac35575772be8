#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import EventLoop
import HCI

/// Writes a btsnoop capture (datalink 1002, H4) that Wireshark and tshark open.
///
/// Buffered, because a busy scan produces thousands of records a second: the buffer goes to
/// the file when it passes `bufferLimit`, when a record arrives more than `flushInterval`
/// after the last write, on `flush()` and on `close()`. A crash loses at most that much.
public final class BTSnoopWriter {
    public let path: String
    public var bufferLimit = 64 * 1024
    public var flushInterval: Duration = .seconds(1)
    private let clock: any MonotonicClock
    private var fileDescriptor: Int32 = -1
    private var buffer: [UInt8] = []
    private var lastFlush: Instant
    public private(set) var recordCount = 0

    /// Creates (or truncates) the file, readable and writable by its owner only, and writes
    /// its header. A symbolic link at `path` is refused (O_NOFOLLOW), not followed.
    public init(path: String, clock: any MonotonicClock = SystemClock()) throws(TransportError) {
        self.path = path
        self.clock = clock
        lastFlush = clock.now
        fileDescriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fileDescriptor >= 0 else { throw .captureFile(path: path, errno: errno) }
        // A file that existed keeps its mode through O_TRUNC: owner only, whatever it was.
        guard fchmod(fileDescriptor, 0o600) == 0 else {
            let code = errno
            Glibc.close(fileDescriptor)
            fileDescriptor = -1
            throw .captureFile(path: path, errno: code)
        }
        buffer.reserveCapacity(bufferLimit + 4096)
        buffer.append(contentsOf: BTSnoop.fileHeader(datalink: .h4))
        try flush()
    }

    deinit { try? close() }

    public var isOpen: Bool { fileDescriptor >= 0 }

    public func write(_ record: BTSnoop.Record) throws(TransportError) {
        guard isOpen else { throw .captureFile(path: path, errno: EBADF) }
        buffer.append(contentsOf: BTSnoop.encodeRecord(record))
        recordCount += 1
        if buffer.count >= bufferLimit || clock.now - lastFlush >= flushInterval {
            try flush()
        }
    }

    public func flush() throws(TransportError) {
        guard isOpen else { return }
        lastFlush = clock.now
        defer { buffer.removeAll(keepingCapacity: true) }
        do throws(Errno) {
            try FileDescriptorIO.writeAll(fileDescriptor, buffer)
        } catch {
            throw .captureFile(path: path, errno: error.code)
        }
    }

    public func close() throws(TransportError) {
        guard isOpen else { return }
        defer {
            _ = Glibc.close(fileDescriptor)
            fileDescriptor = -1
            buffer = []
        }
        try flush()
    }
}
