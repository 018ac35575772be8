/// Why the event loop could not do what was asked. These are failures of the process's
/// environment (out of descriptors, a bug passing a bad descriptor), not of peers.
public enum EventLoopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed; `errno` says why.
    case systemCall(String, errno: Int32)
    /// Signals are process-wide: only one loop at a time may turn them into callbacks.
    case signalsOwnedByAnotherLoop
    /// `run()` was called from inside one of the loop's own callbacks.
    case alreadyRunning

    public var description: String {
        switch self {
        case .systemCall(let name, let errno):
            "\(name) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        case .signalsOwnedByAnotherLoop:
            "another event loop already handles signals in this process"
        case .alreadyRunning:
            "the event loop is already running"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
