import EventLoop
import PresenceProof

/// Per-tag proof bookkeeping (see docs/proof-protocol.md): the GATT value handles found by discovery,
/// consecutive failures, lockout, and the last successful proof.
///
/// Sans-IO: time comes in as `now`; the caller acts on what the mutating calls return
/// (emit `spoof_suspected`, flash the red LED). Memory is bounded by the number of
/// configured tags: the agent only records tags it found in its configuration.
public struct ProofBook: Sendable {
    public struct Policy: Hashable, Sendable {
        /// Failed proofs in a row that lock a tag out.
        public var maxConsecutiveFailures: Int
        public var lockout: Duration

        public init(maxConsecutiveFailures: Int = 3, lockout: Duration = .seconds(300)) {
            self.maxConsecutiveFailures = max(1, maxConsecutiveFailures)
            self.lockout = lockout
        }
    }

    public struct SuccessfulProof: Hashable, Sendable {
        public var at: Instant
        public var roundTripMilliseconds: Int
    }

    /// What a failure led to.
    public enum FailureOutcome: Hashable, Sendable {
        /// Counted; `consecutive` failures so far.
        case counted(consecutive: Int)
        /// This failure locked the tag out: emit one `spoof_suspected` (visit start = `since`).
        case lockedOut(since: Instant, until: Instant)
        /// The tag was already locked out (a handshake that raced the lockout): nothing more.
        case alreadyLockedOut
        /// Not the tag's doing (a controller reset): neither counted nor dropping the cache.
        case notCounted
    }

    struct Record: Sendable {
        var handles: ProofHandles?
        var consecutiveFailures = 0
        var lockedUntil: Instant?
        var lastProof: SuccessfulProof?
        var lastFailure: ProofFailure?
    }

    public let policy: Policy
    private var records: [String: Record] = [:]

    public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    // MARK: Queries

    /// Whether a handshake may be tried now (not locked out).
    public func mayAttempt(tag: String, now: Instant) -> Bool {
        guard let until = records[tag]?.lockedUntil else { return true }
        return now >= until
    }

    public func isLockedOut(tag: String, now: Instant) -> Bool { !mayAttempt(tag: tag, now: now) }

    /// The handles from the last discovery, if no failure has happened since.
    public func cachedHandles(tag: String) -> ProofHandles? { records[tag]?.handles }

    public func consecutiveFailures(tag: String) -> Int { records[tag]?.consecutiveFailures ?? 0 }

    public func lastProof(tag: String) -> SuccessfulProof? { records[tag]?.lastProof }

    public func lastFailure(tag: String) -> ProofFailure? { records[tag]?.lastFailure }

    /// A valid proof younger than `ttl` (see docs/presence.md, `proof_ttl_s`), and not locked out.
    public func isProven(tag: String, now: Instant, ttl: Duration) -> Bool {
        guard mayAttempt(tag: tag, now: now), let proof = records[tag]?.lastProof else { return false }
        return now - proof.at < ttl
    }

    /// When the earliest lockout ends, for the caller's timer (then call `expireLockouts`).
    public var nextDeadline: Instant? { records.values.compactMap(\.lockedUntil).min() }

    // MARK: Inputs

    /// A proof succeeded: failures reset, handles cached.
    public mutating func recordSuccess(tag: String, handles: ProofHandles, roundTripMilliseconds: Int, now: Instant) {
        var record = records[tag] ?? Record()
        record.handles = handles
        record.consecutiveFailures = 0
        record.lastProof = SuccessfulProof(at: now, roundTripMilliseconds: max(0, roundTripMilliseconds))
        record.lastFailure = nil
        records[tag] = record
    }

    /// A connection completed but yielded no valid proof: the handle cache goes (the tag
    /// may have been reflashed), the failure counts, and the third in a row locks out.
    public mutating func recordFailure(tag: String, reason: ProofFailure, now: Instant) -> FailureOutcome {
        guard reason.countsTowardsLockout else { return .notCounted }
        var record = records[tag] ?? Record()
        defer { records[tag] = record }
        record.handles = nil
        record.lastFailure = reason
        if let until = record.lockedUntil {
            if now < until { return .alreadyLockedOut }
            // The lockout ran out without `expireLockouts`: the tag starts afresh.
            record.lockedUntil = nil
            record.consecutiveFailures = 0
        }
        record.consecutiveFailures += 1
        guard record.consecutiveFailures >= policy.maxConsecutiveFailures else {
            return .counted(consecutive: record.consecutiveFailures)
        }
        let until = now + policy.lockout
        record.lockedUntil = until
        // A successful proof from before the attack no longer vouches for the tag.
        record.lastProof = nil
        return .lockedOut(since: now, until: until)
    }

    /// Ends the lockouts whose time is up; returns those tags (they start afresh).
    public mutating func expireLockouts(now: Instant) -> [String] {
        var ended = [String]()
        for (tag, record) in records {
            guard let until = record.lockedUntil, until <= now else { continue }
            var updated = record
            updated.lockedUntil = nil
            updated.consecutiveFailures = 0
            records[tag] = updated
            ended.append(tag)
        }
        return ended.sorted()
    }

    /// Forgets tags no longer configured (after a reload).
    public mutating func retain(tags: Set<String>) {
        records = records.filter { tags.contains($0.key) }
    }
}
