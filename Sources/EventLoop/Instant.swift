/// A point on a monotonic time line, in nanoseconds from an arbitrary origin.
///
/// Every timer in the stack (HCI command timeouts, ATT transactions, the leave
/// debounce, backoff, LED blinks) is computed from `Instant`s handed in by the
/// caller, never read from the system inside a state machine, so tests can run
/// hours of simulated time in milliseconds.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = Instant(nanoseconds: 0)

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds &+ rhs.nanosecondsClamped)
    }

    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds &- rhs.nanosecondsClamped)
    }

    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .nanoseconds(lhs.nanoseconds &- rhs.nanoseconds)
    }

    public static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }

    /// Seconds since the origin, for logs and statistics.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public var description: String { "\(seconds)s" }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return ns &+ attoseconds / 1_000_000_000
    }

    /// The duration in seconds as a floating-point number.
    public var secondsDouble: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
