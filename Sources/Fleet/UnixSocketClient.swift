#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import CLinux  // whole-module (release) builds see SOCK_STREAM, SOCK_CLOEXEC, MSG_NOSIGNAL through it
import EventLoop

/// The client side of the status socket, for `beacon-gateway status`: one request, the
/// whole answer, bounded in size and time (a stuck agent cannot hang the command).
public enum UnixSocketClient {
    public enum Failure: Error, Equatable {
        /// Nothing listens there (no file, or a stale one): the agent is not running.
        case notRunning
        /// The socket exists but this user may not use it.
        case permissionDenied
        case failed(String)
    }

    /// A connected, blocking socket, or nil.
    static func connect(path: String) -> Int32? {
        try? connectOrThrow(path: path)
    }

    /// A connected, blocking socket to `path`, or why not (for exchanges longer than one
    /// answer: `enroll` through the agent).
    public static func connectOrThrow(path: String) throws(Failure) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .failed("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .failed(String(cString: strerror(errno))) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            switch code {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw .notRunning
            case EACCES, EPERM: throw .permissionDenied
            default: throw .failed(String(cString: strerror(code)))
            }
        }
        return fd
    }

    /// Writes all of `bytes` to the connected socket `fd` (a closed peer is an error, not
    /// SIGPIPE); false when it could not, with `errno` saying why.
    public static func sendAll(_ bytes: [UInt8], on fd: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = SystemCall.retryingInterrupts {
                bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Sends `request` and reads until the agent closes, at most `maxBytes`, within `timeout`.
    public static func exchange(path: String, request: [UInt8], maxBytes: Int = 4 << 20,
                                timeout: Duration = .seconds(5)) throws(Failure) -> [UInt8] {
        let fd = try connectOrThrow(path: path)
        defer { _ = Glibc.close(fd) }
        let clock = SystemClock()
        let deadline = clock.now + timeout
        guard sendAll(request, on: fd) else {
            throw .failed("cannot send the request: \(String(cString: strerror(errno)))")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let wait = EventLoop.pollTimeout(until: deadline, now: clock.now)
            guard wait != 0 else { throw .failed("no answer within \(timeout)") }
            var pollDescriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = SystemCall.retryingInterrupts { poll(&pollDescriptor, 1, wait) }
            if ready < 0 {
                throw .failed(String(cString: strerror(errno)))
            }
            if ready == 0 { continue }
            let count = SystemCall.retryingInterrupts {
                buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            }
            if count == 0 { return answer }
            if count < 0 {
                if errno == EAGAIN { continue }
                throw .failed(String(cString: strerror(errno)))
            }
            answer += buffer[..<count]
            guard answer.count <= maxBytes else { throw .failed("the answer is larger than \(maxBytes) bytes") }
        }
    }
}
