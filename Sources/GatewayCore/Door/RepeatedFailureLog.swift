import EventLoop

/// How often a failure that repeats is written to the journal: its first time, then a
/// summary at most every `summaryInterval` with how many times it happened since, and a
/// line when it stops (docs/logs-and-systemd.md, "Repeated failures"). During hours of disk
/// trouble a retry every 5 s would otherwise write 720 lines an hour, and a checkpoint
/// every second at a test's `leave_after_s` thousands.
struct RepeatedFailureLog: Sendable {
    enum Line: Equatable {
        /// The first failure, or a summary: `repeats` failures since the last line (the
        /// first line counts itself).
        case failing(repeats: Int, since: Instant)
        /// The operation succeeded again after `failures` failures since `since`.
        case recovered(failures: Int, since: Instant)
    }

    static let summaryInterval: Duration = .seconds(600)

    private var firstFailure: Instant?
    private var lastLine = Instant.zero
    private var unlogged = 0
    private var total = 0

    var isFailing: Bool { firstFailure != nil }

    /// One more failure: the line to write now, if any.
    mutating func failed(at now: Instant) -> Line? {
        total += 1
        guard let first = firstFailure else {
            firstFailure = now
            lastLine = now
            return .failing(repeats: 1, since: now)
        }
        unlogged += 1
        guard now - lastLine >= Self.summaryInterval else { return nil }
        defer { unlogged = 0 }
        lastLine = now
        return .failing(repeats: unlogged, since: first)
    }

    /// It worked: the line to write if it had failed.
    mutating func succeeded() -> Line? {
        guard let first = firstFailure else { return nil }
        defer { self = RepeatedFailureLog() }
        return .recovered(failures: total, since: first)
    }
}
