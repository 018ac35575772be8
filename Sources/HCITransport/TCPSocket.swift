#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import EventLoop

/// The system calls behind `TCPTransport.open()`.
enum TCPSocket {
    /// Tries every address the name resolves to, in order, within one overall timeout.
    static func connect(host: String, port: UInt16, timeout: Duration) throws(TransportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw .hostNotFound(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }

        let clock = SystemClock()
        let deadline = clock.now + timeout
        var lastError: TransportError = .connectFailed(host: host, port: port, errno: ECONNREFUSED)
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            do {
                return try connect(current.pointee, deadline: deadline, clock: clock)
            } catch {
                switch error {
                case .failed(let errno): lastError = .connectFailed(host: host, port: port, errno: errno)
                case .timedOut:
                    throw .connectTimedOut(host: host, port: port, milliseconds: Int(timeout.nanosecondsClamped / 1_000_000))
                }
            }
        }
        throw lastError
    }

    private static func connect(_ address: addrinfo, deadline: Instant, clock: SystemClock) throws(TransportError.ConnectFailure) -> Int32 {
        let type = address.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(address.ai_family, type, address.ai_protocol)
        guard fd >= 0 else { throw .failed(errno) }
        var keep = false
        defer { if !keep { _ = close(fd) } }

        if Glibc.connect(fd, address.ai_addr, address.ai_addrlen) < 0 {
            guard errno == EINPROGRESS || errno == EINTR else { throw .failed(errno) }
            // Wait for the handshake, then ask the socket how it went.
            while true {
                let timeout = EventLoop.pollTimeout(until: deadline, now: clock.now)
                if timeout == 0 { throw .timedOut }
                var pollDescriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let ready = SystemCall.retryingInterrupts { poll(&pollDescriptor, 1, timeout) }
                if ready < 0 { throw .failed(errno) }
                if ready > 0 { break }
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0 else { throw .failed(errno) }
            guard socketError == 0 else { throw .failed(socketError) }
        }
        var on: Int32 = 1
        // Best effort: without it commands would merely wait for Nagle's timer.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        keep = true
        return fd
    }
}

extension TransportError {
    /// How one address of a host failed, before it becomes a `TransportError` naming the host.
    enum ConnectFailure: Error {
        case failed(Int32)
        case timedOut
    }
}
