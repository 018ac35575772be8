import EventLoop

/// Whether events can be stored, from the outcome of every store operation, and when to
/// try the disk again. Sans-IO: the agent feeds it each commit's result with the time,
/// logs the change it returns (one line per change of state, never one per event), shows
/// the state (STATUS, the amber LED) and retries at `nextRetry`.
///
/// Retries back off from 1 s, doubling to 30 s, while the trouble lasts; a success
/// resets them (docs/reliability.md, "Disk trouble").
public struct StoreHealth: Sendable {
    /// A change of state, to be logged once.
    public struct Change: Hashable, Sendable {
        /// The trouble now; `nil`: events are stored again.
        public var trouble: StoreTrouble?
        /// The trouble before; `nil`: the store was healthy.
        public var previous: StoreTrouble?
        /// How long the previous trouble lasted (when there was one).
        public var lasted: Duration?
    }

    public static let firstRetry: Duration = .seconds(1)
    public static let longestRetry: Duration = .seconds(30)

    /// The current trouble; `nil` while events are stored.
    public private(set) var trouble: StoreTrouble?
    /// Since when the store has been in trouble (of any kind).
    public private(set) var troubledSince: Instant?
    /// When the agent should try the disk again; `nil` while healthy.
    public private(set) var nextRetry: Instant?
    private var backoff: Duration = StoreHealth.firstRetry
    /// A database found corrupt stays so until it has been examined (reopened, rebuilt or
    /// moved aside): another write that happens to succeed on the damaged file, away from
    /// its broken pages, is no recovery.
    private var awaitingExamination = false

    public init() {}

    public var isHealthy: Bool { trouble == nil }

    /// An operation reached the disk.
    public mutating func succeeded(at now: Instant) -> Change? {
        guard let previous = trouble, !awaitingExamination else { return nil }
        let lasted = troubledSince.map { now - $0 }
        trouble = nil
        troubledSince = nil
        nextRetry = nil
        backoff = Self.firstRetry
        return Change(trouble: nil, previous: previous, lasted: lasted)
    }

    /// An operation failed with `kind`. Reported once per change of kind.
    public mutating func failed(_ kind: StoreTrouble, at now: Instant) -> Change? {
        let previous = trouble
        if previous == nil {
            troubledSince = now
            backoff = Self.firstRetry
            nextRetry = now + backoff
        }
        if kind == .corrupt { awaitingExamination = true }
        guard previous != kind else { return nil }
        trouble = kind
        return Change(trouble: kind, previous: previous, lasted: nil)
    }

    /// The database was opened again (a corrupt one examined, and rebuilt or moved aside
    /// with a fresh one started): from now on a success means events are stored again.
    public mutating func reopened() {
        awaitingExamination = false
    }

    /// The agent is trying the disk again now: the next try, should this one fail too,
    /// waits twice as long (at most `longestRetry`).
    public mutating func retrying(at now: Instant) {
        guard trouble != nil else { return }
        backoff = min(backoff * 2, Self.longestRetry)
        nextRetry = now + backoff
    }
}
