import EventLoop

/// When each person's head event may be tried again, on the monotonic clock.
///
/// Kept in memory, not in the store: a wall-clock time written to disk would hold every
/// retry back by however far the clock is stepped back (a Pi without a real-time clock
/// before NTP). What is lost on restart is only the wait: after a start every pending
/// event is due at once, and the backoff starts again from its first step.
///
/// One entry per person at most: a person's later events wait behind their head event
/// anyway (per-person order), so holding the person back holds all of them.
struct RetrySchedule {
    private var due: [String: Instant] = [:]

    /// `person`'s head event is not to be sent before `at`.
    mutating func hold(person: String, until at: Instant) {
        due[person] = at
    }

    /// The persons still held at `now`; entries that have come due are forgotten.
    mutating func held(at now: Instant) -> Set<String> {
        due = due.filter { $0.value > now }
        return Set(due.keys)
    }

    /// The earliest time a held person comes due.
    var nextDue: Instant? { due.values.min() }

    var isEmpty: Bool { due.isEmpty }

    /// The operator changed something (token, URL, CA): everything is due now.
    mutating func releaseAll() {
        due.removeAll()
    }
}

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
