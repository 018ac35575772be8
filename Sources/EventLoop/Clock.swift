#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the current monotonic time and wall-clock time come from.
///
/// Production code uses `SystemClock`; tests use `ManualClock` and advance it.
public protocol MonotonicClock: AnyObject {
    /// Monotonic time: never jumps, used for every timer.
    var now: Instant { get }
    /// Wall-clock time in milliseconds since the Unix epoch, for event timestamps.
    var wallMilliseconds: Int64 { get }
}

/// The operating system's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME.
public final class SystemClock: MonotonicClock {
    public init() {}

    public var now: Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    public var wallMilliseconds: Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// A clock that moves only when told to: for tests and simulations.
public final class ManualClock: MonotonicClock {
    public private(set) var now: Instant
    /// Wall-clock milliseconds that correspond to `Instant.zero`.
    public var wallOriginMilliseconds: Int64

    public init(now: Instant = .zero, wallOriginMilliseconds: Int64 = 1_789_012_345_678) {
        self.now = now
        self.wallOriginMilliseconds = wallOriginMilliseconds
    }

    public var wallMilliseconds: Int64 { wallOriginMilliseconds + now.nanoseconds / 1_000_000 }

    public func advance(by duration: Duration) { now = now + duration }

    public func advance(to instant: Instant) {
        precondition(instant >= now, "a monotonic clock never goes back")
        now = instant
    }
}
