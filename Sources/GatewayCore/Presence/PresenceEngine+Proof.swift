import EventLoop

/// Hooks for the proof of a genuine tag (see docs/proof-protocol.md). The handshakes themselves live
/// elsewhere; the engine only keeps each tag's latest proof and lockout and lets a
/// `require_proof` person check in only with a proof younger than `proof_ttl_s`.
extension PresenceEngine {
    enum ProofStatus {
        case valid(roundTripMs: Int)
        case missing(ProofWaitReason)
    }

    /// The freshest valid proof among the person's tags that are not locked out.
    func proof(person: Int, now: Int64) -> ProofStatus {
        var best: (at: Int64, roundTripMs: Int)?
        var allLocked = !persons[person].tagSlots.isEmpty
        for slot in persons[person].tagSlots {
            let tag = tags[slot]
            if isLocked(tag, now: now) { continue }
            allLocked = false
            guard tag.proofAt != Self.never, tag.proofAt <= now, now &- tag.proofAt < limits.proofTTL else { continue }
            if let current = best, current.at >= tag.proofAt { continue }
            best = (tag.proofAt, tag.proofRoundTripMs)
        }
        if let best { return .valid(roundTripMs: best.roundTripMs) }
        return .missing(allLocked ? .lockedOut : .noValidProof)
    }

    func isLocked(_ tag: TagSlot, now: Int64) -> Bool {
        tag.lockedUntil != Self.never && now < tag.lockedUntil
    }

    /// A handshake with the tag succeeded. If the person was waiting in NEARBY with a
    /// signal above `enter_rssi`, this checks them in now. Ignored while the tag is
    /// locked out.
    public mutating func proofSucceeded(tagIndex: Int, at time: Instant, roundTripMilliseconds: Int) -> [PresenceEvent] {
        guard let slot = tagSlot(forTagIndex: tagIndex) else { return [] }
        let now = monotonic(time)
        guard !isLocked(tags[slot], now: now) else { return [] }
        tags[slot].proofAt = now
        tags[slot].proofRoundTripMs = max(0, roundTripMilliseconds)
        let person = Int(tags[slot].person)
        var events: [PresenceEvent] = []
        fireDue(person: person, now: now, into: &events)
        evaluate(person: person, now: now, into: &events)
        schedule(person: person)
        return events
    }

    /// A handshake completed without a valid proof: any earlier proof of the tag no
    /// longer counts (a failure is a reason for doubt, not just a missing success).
    public mutating func proofFailed(tagIndex: Int, at time: Instant) {
        guard let slot = tagSlot(forTagIndex: tagIndex) else { return }
        _ = monotonic(time)
        tags[slot].proofAt = Self.never
    }

    /// The tag is locked out (3 failed proofs in a row) until `until`: its proofs do not
    /// count, and a person whose tags are all locked cannot check in.
    public mutating func tagLockedOut(tagIndex: Int, until: Instant) {
        guard let slot = tagSlot(forTagIndex: tagIndex) else { return }
        tags[slot].lockedUntil = until.nanoseconds
        tags[slot].proofAt = Self.never
    }

    /// Whether a handshake with this tag is wanted now: its person needs a proof to check
    /// in, is heard (NEARBY), has no valid proof, and the tag is not locked out. The
    /// connect scheduler drops the pending connect when this turns false (see docs/persistent-connect.md).
    public func wantsProof(tagIndex: Int, at time: Instant) -> Bool {
        guard let slot = tagSlot(forTagIndex: tagIndex) else { return false }
        let person = Int(tags[slot].person)
        let now = max(time.nanoseconds, latest)
        guard persons[person].requireProof, persons[person].state == .nearby,
              !isLocked(tags[slot], now: now) else { return false }
        if case .valid = proof(person: person, now: now) { return false }
        return true
    }
}
