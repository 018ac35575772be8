import EventLoop

/// Whether the store can record outcomes, and how long to wait before trying again
/// when it cannot (disk full, a read-only SD card, a lock held by another process).
///
/// Without a pause the events whose outcomes were not recorded would be found pending
/// and sent again at once, in a tight loop. Logged once when the outage starts and once
/// when it ends, not on every attempt.
struct StoreOutage {
    /// The first pause; each further failure doubles it, up to `maximumPause`.
    static let firstPause: Duration = .seconds(1)
    static let maximumPause: Duration = .seconds(30)

    private(set) var failures = 0
    /// No store work before this (monotonic).
    private(set) var pausedUntil: Instant?

    var isFailing: Bool { failures > 0 }

    /// A store operation failed at `now`; returns whether this starts an outage (to log).
    mutating func failed(at now: Instant) -> Bool {
        failures += 1
        let doublings = min(failures - 1, 10)
        let pause = min(Self.firstPause * (1 << doublings), Self.maximumPause)
        pausedUntil = now + pause
        return failures == 1
    }

    /// A write succeeded; returns whether this ends an outage (to log). Reads do not
    /// count: with the disk full reads still work, and counting them would log a
    /// recovery and a new failure on every attempt.
    mutating func wrote() -> Bool {
        defer {
            failures = 0
            pausedUntil = nil
        }
        return failures > 0
    }

    /// Whether store work must wait at `now`.
    func isPaused(at now: Instant) -> Bool {
        pausedUntil.map { now < $0 } ?? false
    }
}
