#if canImport(Glibc)
import Glibc
#endif

/// The one place a system call interrupted by a signal is made again. A signal that
/// arrives before a call did anything makes it fail with EINTR; the call is then simply
/// repeated (the agent's own signals arrive through a pipe, so an interruption is never
/// news the caller needs).
public enum SystemCall {
    /// Calls `call` until it does not fail with EINTR; its result as the last call gave
    /// it (a negative result leaves `errno` set by that call).
    @inlinable
    public static func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
