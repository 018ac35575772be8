import SplitMix
/// When to try an event again after `failures` failed attempts (see docs/event-api.md): about 0.1,
/// 0.5, 2 and 5 s, then doubling, never more than `maximum`; each delay spread by ±20 %
/// jitter so gateways that lost the server together do not return in lockstep.
public struct Backoff: Hashable, Sendable {
    public var maximum: Duration
    /// The spread around each delay: 0.2 means ×0.8 … ×1.2.
    public var jitter: Double

    public init(maximum: Duration, jitter: Double = 0.2) {
        self.maximum = maximum
        self.jitter = min(max(jitter, 0), 0.9)
    }

    static let firstDelaysMillis: [Int64] = [100, 500, 2_000, 5_000]

    /// The delay before attempt `failures + 1`, without jitter.
    public func nominalDelay(failures: Int) -> Duration {
        let maximumMillis = Self.milliseconds(maximum)
        guard failures >= 1 else { return .zero }
        let millis: Int64
        if failures <= Self.firstDelaysMillis.count {
            millis = Self.firstDelaysMillis[failures - 1]
        } else {
            // 5 s × 2^(n-4), without overflowing for absurd attempt counts.
            let doublings = min(failures - Self.firstDelaysMillis.count, 40)
            millis = 5_000 << Int64(doublings)
        }
        return .milliseconds(min(millis, maximumMillis))
    }

    /// The delay with jitter; `unit` is a uniform random number in 0 ..< 1.
    public func delay(failures: Int, unit: Double) -> Duration {
        let nominal = Double(Self.milliseconds(nominalDelay(failures: failures)))
        let factor = 1 - jitter + 2 * jitter * min(max(unit, 0), 1)
        let millis = min(nominal * factor, Double(Self.milliseconds(maximum)))
        return .milliseconds(Int64(millis.rounded()))
    }

    /// The delay after the server refused our credentials: near the maximum (jitter only
    /// downwards), since only an operator can fix it.
    public func longDelay(unit: Double) -> Duration {
        let maximumMillis = Double(Self.milliseconds(maximum))
        return .milliseconds(Int64((maximumMillis * (1 - jitter * min(max(unit, 0), 1))).rounded()))
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (millis, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds < 0 ? 0 : Int64.max / 2 }
        return max(0, millis + attoseconds / 1_000_000_000_000_000)
    }
}

/// Reproducible jitter in tests, cheap in use.
public typealias JitterSource = SplitMix64
