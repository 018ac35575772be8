#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemCalls
import Synchronization

/// The write end of the self-pipe of the loop that owns signals, or -1.
///
/// Signal dispositions are per process, so one loop at a time owns them. The handler
/// reads this atomically because it runs in async-signal context, where it may do nothing
/// but write(2) one byte.
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The whole signal handler: one byte naming the signal into the self-pipe. Everything
/// else happens later on the loop, outside async-signal context.
private func writeSignalByte(_ signalNumber: Int32) {
    let savedErrno = errno
    let fileDescriptor = signalPipeWriteEnd.load(ordering: .acquiring)
    if fileDescriptor >= 0 {
        var byte = UInt8(truncatingIfNeeded: signalNumber)
        // A full pipe (64 KiB of undelivered signals) drops this one: nothing to do about it
        // in a signal handler, and the loop is plainly not keeping up anyway.
        _ = write(fileDescriptor, &byte, 1)
    }
    errno = savedErrno
}

struct SignalState {
    var readEnd: Int32 = -1
    var writeEnd: Int32 = -1
    var registration: EventLoop.Registration?
    var handlers: [UnixSignal: () -> Void] = [:]
    var previousActions: [UnixSignal: sigaction] = [:]
}

extension EventLoop {
    /// Turns `signal` into a call of `handler` on the loop (replacing an earlier handler for
    /// it). The first call creates a self-pipe and claims the process's signals for this
    /// loop; `stopHandlingSignals()` or the loop's deinit give them back.
    public func onSignal(_ signal: UnixSignal, _ handler: @escaping () -> Void) throws(EventLoopError) {
        if signals.readEnd < 0 { try openSignalPipe() }
        if signals.previousActions[signal] == nil {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = writeSignalByte
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            var previous = sigaction()
            guard sigaction(signal.rawValue, &action, &previous) == 0 else {
                throw .systemCall("sigaction(\(signal))", errno: errno)
            }
            signals.previousActions[signal] = previous
        }
        signals.handlers[signal] = handler
    }

    /// Restores the dispositions the signals had before `onSignal`, and releases the
    /// process's signals for another loop.
    public func stopHandlingSignals() {
        for (signal, var previous) in signals.previousActions {
            _ = sigaction(signal.rawValue, &previous, nil)
        }
        signals.previousActions = [:]
        signals.handlers = [:]
        guard signals.readEnd >= 0 else { return }
        // Release the pipe before closing it, so a late signal cannot write into
        // whatever file reuses the descriptor number.
        _ = signalPipeWriteEnd.compareExchange(expected: signals.writeEnd, desired: -1, ordering: .acquiringAndReleasing)
        if let registration = signals.registration { unregister(registration) }
        _ = close(signals.readEnd)
        _ = close(signals.writeEnd)
        signals = SignalState()
    }

    private func openSignalPipe() throws(EventLoopError) {
        var ends: [Int32] = [-1, -1]
        // pipe2(2) is hidden behind _GNU_SOURCE in Glibc's module, so set the flags after.
        guard pipe(&ends) == 0 else { throw .systemCall("pipe", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        let claimed = signalPipeWriteEnd.compareExchange(expected: -1, desired: ends[1], ordering: .acquiringAndReleasing)
        guard claimed.exchanged else {
            _ = close(ends[0])
            _ = close(ends[1])
            throw .signalsOwnedByAnotherLoop
        }
        signals.readEnd = ends[0]
        signals.writeEnd = ends[1]
        signals.registration = register(fileDescriptor: ends[0]) { [unowned self] in self.drainSignalPipe() }
    }

    private func drainSignalPipe() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = SystemCall.retryingInterrupts {
                bytes.withUnsafeMutableBytes { read(signals.readEnd, $0.baseAddress, $0.count) }
            }
            guard count > 0 else { return }
            for byte in bytes.prefix(count) {
                signals.handlers[UnixSignal(rawValue: Int32(byte))]?()
            }
        }
    }
}
