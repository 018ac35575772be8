import EventLoop

/// When retention runs (docs/event-api.md, "Retention"), as a sans-IO schedule the agent
/// follows with one timer: a first pass 5 s after start (the door is up by then), then hourly; while a pass
/// finds full batches it goes on a batch at a time, with a short pause between two so that
/// reports and commits keep their turns of the loop.
public struct RetentionSchedule: Sendable {
    public static let firstPassAfter: Duration = .seconds(5)
    public static let interval: Duration = .seconds(3_600)
    public static let pauseBetweenBatches: Duration = .milliseconds(100)

    /// When the next batch is due.
    public private(set) var next: Instant
    /// What the pass under way has pruned so far.
    public private(set) var pass = PrunedRows()

    public init(startedAt now: Instant) {
        next = now + Self.firstPassAfter
    }

    public enum Outcome: Equatable, Sendable {
        /// More batches follow.
        case continuing
        /// The pass ended; what it pruned in all (nothing to log when zero).
        case finished(PrunedRows)
        /// The store refused; the next pass is an interval away.
        case failed
    }

    /// A batch ran at `now`: `pruned` rows, `more` when the batch was full; nil `pruned`
    /// when it failed.
    public mutating func batchFinished(pruned: PrunedRows?, more: Bool, at now: Instant) -> Outcome {
        guard let pruned else {
            pass = PrunedRows()
            next = now + Self.interval
            return .failed
        }
        pass = pass + pruned
        if more {
            next = now + Self.pauseBetweenBatches
            return .continuing
        }
        let done = pass
        pass = PrunedRows()
        next = now + Self.interval
        return .finished(done)
    }
}
