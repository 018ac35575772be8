#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemCalls

/// The readiness backend of a `VirtualEventLoop`: it never waits. Descriptors are asked
/// with a zero timeout (so a test's own pipes and socket pairs work as they are), and a
/// `ScriptedDescriptor`'s output side answers as its script says.
///
/// Where the system poller would wait for a timer, this one moves the manual clock to the
/// timer's deadline instead, so `run()` on a virtual loop runs in virtual time.
final class ScriptedPoller: ReadinessPoller {
    private let clock: ManualClock
    /// Descriptors whose writability the test decides (a peer that stops reading).
    var refusesOutput: Set<Int32> = []

    init(clock: ManualClock) {
        self.clock = clock
    }

    func wait(_ descriptors: inout [pollfd], _ wait: PollWait) throws(EventLoopError) -> Int {
        let ready = try readyNow(&descriptors)
        guard ready == 0 else { return ready }
        switch wait {
        case .none:
            return 0
        case .until(let deadline):
            if deadline > clock.now { clock.advance(to: deadline) }
            return 0
        case .forever:
            preconditionFailure("a loop on virtual time would wait forever: no descriptor is ready and no timer is armed")
        }
    }

    private func readyNow(_ descriptors: inout [pollfd]) throws(EventLoopError) -> Int {
        guard !descriptors.isEmpty else { return 0 }
        for index in descriptors.indices where refusesOutput.contains(descriptors[index].fd) {
            descriptors[index].events &= ~Int16(POLLOUT)
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), 0)
        if ready < 0 {
            let error = errno
            if error == EINTR { return 0 }
            throw .systemCall("poll", errno: error)
        }
        return Int(ready)
    }
}

/// A descriptor for code under test on a `VirtualEventLoop`, with the test at the other
/// end: a connected UNIX stream socket pair. Hand `fileDescriptor` to the code under test
/// (it reads and writes it with the ordinary calls); the test feeds bytes in, takes what
/// was written, hangs up, or makes the descriptor stop (and start) taking output.
///
/// Readability is real (bytes fed are there to read), so a reader that pauses reading or
/// reads in small pieces sees exactly what it would see on a socket; only time is virtual.
public final class ScriptedDescriptor {
    /// The end the code under test uses (non-blocking). Owned here and closed when this
    /// goes: code that closes what it is given (a transport) gets a dup(2) of it, or a
    /// later file that reuses the number would be closed under it.
    public let fileDescriptor: Int32
    private var peer: Int32
    private let poller: ScriptedPoller

    init(poller: ScriptedPoller) throws(EventLoopError) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
            throw .systemCall("socketpair", errno: errno)
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        fileDescriptor = ends[0]
        peer = ends[1]
        self.poller = poller
    }

    deinit {
        poller.refusesOutput.remove(fileDescriptor)
        _ = close(fileDescriptor)
        if peer >= 0 { _ = close(peer) }
    }

    /// Makes `bytes` readable on `fileDescriptor`.
    public func feed(_ bytes: [UInt8]) throws(EventLoopError) {
        precondition(peer >= 0, "fed after hangUp()")
        do throws(Errno) {
            try FileDescriptorIO.writeAll(peer, bytes)
        } catch {
            throw .systemCall("write", errno: error.code)
        }
    }

    /// Everything the code under test wrote since the last call.
    public func takeWritten() throws(EventLoopError) -> [UInt8] {
        guard peer >= 0 else { return [] }
        var taken: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = SystemCall.retryingInterrupts {
                buffer.withUnsafeMutableBytes { read(peer, $0.baseAddress, $0.count) }
            }
            if count > 0 {
                taken += buffer.prefix(count)
                continue
            }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK { throw .systemCall("read", errno: errno) }
            return taken
        }
    }

    /// Whether the loop reports the descriptor writable (while its socket buffer has
    /// room): `false` plays a peer that stopped reading.
    public var acceptsOutput: Bool {
        get { !poller.refusesOutput.contains(fileDescriptor) }
        set {
            if newValue { poller.refusesOutput.remove(fileDescriptor) } else { poller.refusesOutput.insert(fileDescriptor) }
        }
    }

    /// Closes the test's end: the code under test reads end of file.
    public func hangUp() {
        guard peer >= 0 else { return }
        _ = close(peer)
        peer = -1
    }
}
