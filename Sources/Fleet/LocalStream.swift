#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import CLinux
import EventLoop

/// A local client the status socket handed over for a longer exchange (enrolment): lines
/// in both directions on the event loop, never blocking it. The client is not trusted: a
/// line longer than `maxLineBytes` ends the exchange, and so does an answer it does not
/// read (more than `maxUnsentBytes` waiting).
public final class LocalStream {
    public let maxLineBytes: Int
    public static let maxUnsentBytes = 64 * 1024
    /// After `finish()`: how long the client gets to close its side before the socket is
    /// closed anyway.
    public static let lingerAfterFinish: Duration = .seconds(2)

    /// A whole line from the client, its newline included.
    public var onLine: ([UInt8]) -> Void = { _ in }
    /// The client hung up, or the exchange broke (an overlong line, a failed read or
    /// write). Told once; not told for a close this side asked for.
    public var onClosed: () -> Void = {}

    private let loop: EventLoop
    private var fd: Int32
    private var registration: EventLoop.Registration?
    private var received: [UInt8] = []
    private var unsent: [UInt8] = []
    private var finishing = false
    private var lingerTimer: EventLoop.TimerHandle?
    /// Itself, from `finish()` to the close: its owner lets go of a finished exchange at
    /// once, and the rest (the queued answer, the client's close, the linger) is the
    /// stream's own.
    private var keptUntilClosed: LocalStream?

    /// Takes `fd` (connected, non-blocking) over: it is closed by this stream.
    public init(loop: EventLoop, fd: Int32, maxLineBytes: Int) {
        self.loop = loop
        self.fd = fd
        self.maxLineBytes = maxLineBytes
        registration = loop.register(fileDescriptor: fd) { [unowned self] in self.readable() }
    }

    deinit {
        closeNow()
    }

    public var isOpen: Bool { fd >= 0 && !finishing }

    /// Queues `bytes` for the client.
    public func send(_ bytes: [UInt8]) {
        guard isOpen else { return }
        unsent += bytes
        guard unsent.count <= Self.maxUnsentBytes else { return broke() }
        write()
    }

    /// Ends the exchange once everything queued is out: the sending side is shut down,
    /// and the socket closed when the client closes its side (or after the linger), so the
    /// client reads the last line rather than a reset.
    public func finish() {
        guard isOpen else { return }
        finishing = true
        keptUntilClosed = self
        lingerTimer = loop.schedule(after: Self.lingerAfterFinish) { [unowned self] in
            self.lingerTimer = nil
            self.closeNow()
        }
        if unsent.isEmpty { shutDownSending() }
    }

    // MARK: Reading

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = SystemCall.retryingInterrupts {
            buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            return finishing ? closeNow() : broke()
        }
        if count == 0 {
            return finishing ? closeNow() : broke()
        }
        // After `finish()` what the client still sends is read and dropped.
        guard !finishing else { return }
        received += buffer[..<count]
        while let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(received[...newline])
            received.removeSubrange(...newline)
            guard line.count <= maxLineBytes else { return broke() }
            onLine(line)
            guard isOpen else { return }
        }
        if received.count > maxLineBytes { broke() }
    }

    // MARK: Writing

    private func write() {
        while !unsent.isEmpty, fd >= 0 {
            let count = SystemCall.retryingInterrupts {
                unsent.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    if let registration {
                        loop.setWritableCallback(registration) { [unowned self] in self.write() }
                    }
                    return
                }
                return finishing ? closeNow() : broke()
            }
            unsent.removeFirst(count)
        }
        if let registration { loop.setWritableCallback(registration, nil) }
        if finishing { shutDownSending() }
    }

    private func shutDownSending() {
        guard fd >= 0 else { return }
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    // MARK: Closing

    private func broke() {
        guard fd >= 0 else { return }
        closeNow()
        onClosed()
    }

    private func closeNow() {
        if let lingerTimer { loop.cancel(lingerTimer) }
        lingerTimer = nil
        if let registration { loop.unregister(registration) }
        registration = nil
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
        unsent = []
        received = []
        // Last: this may be the stream's last reference.
        keptUntilClosed = nil
    }
}
