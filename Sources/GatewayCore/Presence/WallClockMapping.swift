import EventLoop

/// Maps the engine's monotonic `Instant`s to wall-clock milliseconds since the Unix epoch.
///
/// Built once from one `(Instant, wall ms)` pair read together at start (or at restore):
/// events then carry wall times that are consistent with each other even if NTP steps the
/// system clock meanwhile, and a time that went through a restart (stored as wall ms,
/// turned back into an `Instant` with the new mapping) maps back to exactly the same
/// milliseconds — which keeps idempotency keys stable across restarts.
public struct WallClockMapping: Hashable, Sendable {
    public var anchor: Instant
    public var anchorWallMilliseconds: Int64

    public init(anchor: Instant, wallMilliseconds: Int64) {
        self.anchor = anchor
        anchorWallMilliseconds = wallMilliseconds
    }

    /// Wall-clock milliseconds at `instant`, rounded down. Wrapping arithmetic: an absurd
    /// `Instant` gives an absurd time, never a trap.
    public func wallMilliseconds(at instant: Instant) -> Int64 {
        let delta = instant.nanoseconds &- anchor.nanoseconds
        // Floor division, so that instants before the anchor round down too.
        var ms = delta / 1_000_000
        if delta % 1_000_000 < 0 { ms &-= 1 }
        return anchorWallMilliseconds &+ ms
    }

    /// The instant of a wall-clock time; exact for any time inside ±292 years of the anchor.
    public func instant(atWallMilliseconds wall: Int64) -> Instant {
        let deltaMs = wall &- anchorWallMilliseconds
        let (ns, overflow) = deltaMs.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return Instant(nanoseconds: deltaMs < 0 ? .min / 2 : .max / 2) }
        return Instant(nanoseconds: anchor.nanoseconds &+ ns)
    }
}
