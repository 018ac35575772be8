import AttendanceEvents
import EventLoop
import HCI
import PresenceProof

/// Connections and proofs (docs/proof-protocol.md, docs/persistent-connect.md): which tags
/// to connect to, whether a new connection runs a handshake, what outcomes mean for
/// presence, lockouts and spoof_suspected. The links themselves are the driver's.
extension DoorCore {
    /// Brings the connect scheduler's wanted set in line with presence and the proof book,
    /// for the tags whose wish may have changed since the last call.
    mutating func updateWishes(at now: Instant, into actions: inout [DoorAction]) {
        guard wishes.hasPending else { return }
        for change in wishes.update(presence: presence, book: book, now: now) {
            switch change {
            case let .want(tagIndex, peer, tracked): actions.append(.want(tagIndex: tagIndex, peer: peer, tracked: tracked))
            case let .unwant(tagIndex): actions.append(.unwant(tagIndex: tagIndex))
            }
        }
    }

    /// A connection to a wanted tag came up: a handshake if its person waits for a proof,
    /// else it is closed unless the tag is tracked by its connection.
    public mutating func connected(tagIndex: Int, handle: UInt16, at now: Instant) -> [DoorAction] {
        guard let tag = connectionTags[tagIndex] else { return [] }
        var actions: [DoorAction] = [.log(DoorLogLine(.debug, "connected", ["tag": tag.tagId, "handle": "\(handle)"]))]
        if tag.requireProof, let key = tag.key, presence.wantsProof(tagIndex: tagIndex, at: now),
           book.mayAttempt(tag: tag.tagId, now: now) {
            actions.append(.startProof(DoorProofStart(tagIndex: tagIndex, handle: handle, tagId: tag.tagId, key: key,
                                                      cachedHandles: book.cachedHandles(tag: tag.tagId), at: now)))
        } else if !tag.tracked {
            actions.append(.disconnect(handle: handle))
        }
        return actions
    }

    /// A tracked tag's link dropped: its person starts to leave at once (docs/presence.md).
    public mutating func connectionLost(tagIndex: Int, reason: String, at now: Instant) -> [DoorAction] {
        guard let tag = connectionTags[tagIndex], tag.tracked else { return [] }
        var actions: [DoorAction] = [.log(DoorLogLine(.info, "link lost", ["tag": tag.tagId, "person_id": tag.personId, "reason": reason]))]
        let events = presence.linkLost(tagIndex: tagIndex, at: now)
        checkpoints.changed(tag.personId)
        wishes.personChanged(tag.personId)
        handle(events, at: now, into: &actions)
        // Straight back into the pending set (the scheduler already re-armed with it).
        updateWishes(at: now, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }

    /// The RSSI of a tracked tag's connection: a sample like an advertisement's.
    public mutating func connectionRSSI(tagIndex: Int, rssi: Int, at now: Instant) -> [DoorAction] {
        guard let tag = connectionTags[tagIndex], let peer = tag.configuredPeer ?? wishes.lastPeer(tagIndex) else { return [] }
        let events = presence.sample(tagIndex: tagIndex, rssi: rssi, address: peer.address, addressType: peer.addressType,
                                     txPower: nil, at: now)
        checkpoints.heard(tag.personId, tagIndex: tagIndex)
        var actions: [DoorAction] = []
        handle(events, at: now, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }

    /// A handshake ended. Valid: the proof counts for presence. Failed: earlier proofs of
    /// the tag no longer count; enough failures in a row lock the tag out and decide one
    /// `spoof_suspected` (docs/event-api.md), whose visit start is the lockout's start.
    public mutating func proofFinished(_ outcome: ProofOutcome, at now: Instant) -> [DoorAction] {
        guard let tagIndex = tagIndexById[outcome.tagId], let tag = connectionTags[tagIndex] else { return [] }
        var actions: [DoorAction] = [.indicate(.proofFinished(ok: outcome.ok))]
        wishes.personChanged(tag.personId)
        actions.append(.log(DoorLogLine(outcome.ok ? .info : .warning, "proof", [
            "tag": outcome.tagId, "person_id": tag.personId, "ok": "\(outcome.ok)",
            "rt_ms": "\(outcome.roundTripMilliseconds)", "att": "\(outcome.attRoundTrips)",
            "cache": "\(outcome.usedCachedHandles)", "failure": outcome.failure?.name ?? "-",
        ])))
        if outcome.ok, let handles = outcome.handles {
            book.recordSuccess(tag: outcome.tagId, handles: handles, roundTripMilliseconds: outcome.roundTripMilliseconds, now: now)
            let events = presence.proofSucceeded(tagIndex: tagIndex, at: now, roundTripMilliseconds: outcome.roundTripMilliseconds)
            checkpoints.changed(tag.personId)
            handle(events, at: now, into: &actions)
        } else if let failure = outcome.failure {
            presence.proofFailed(tagIndex: tagIndex, at: now)
            actions.append(.indicate(.proofFailed))
            // A controller reset is nobody's fault: not counted towards a lockout.
            if case .controllerReset = failure {
            } else if case let .lockedOut(since, until) = book.recordFailure(tag: outcome.tagId, reason: failure, now: now) {
                presence.tagLockedOut(tagIndex: tagIndex, until: until)
                actions.append(.log(DoorLogLine(.warning, "spoof suspected: tag locked out", [
                    "tag": outcome.tagId, "person_id": tag.personId,
                    "until_s": "\(Int((until - since).nanosecondsClamped / 1_000_000_000))",
                ])))
                spoofSuspected(tagIndex: tagIndex, tag: tag, since: since, roundTripMilliseconds: outcome.roundTripMilliseconds,
                               at: now, into: &actions)
            }
        }
        updateWishes(at: now, into: &actions)
        actions.append(.armTimer(nextDeadline))
        return actions
    }

    mutating func spoofSuspected(tagIndex: Int, tag: DoorConnectionTag, since: Instant, roundTripMilliseconds: Int,
                                 at now: Instant, into actions: inout [DoorAction]) {
        let wall = presence.wallClock.wallMilliseconds(at: since)
        let identities = tagIndex < identitiesByTagIndex.count ? identitiesByTagIndex[tagIndex] : []
        let address = wishes.lastPeer(tagIndex)?.address ?? tag.configuredPeer?.address ?? BluetoothAddress(rawValue: 0)
        var event = AttendanceEvent.spoofSuspected(
            personId: tag.personId, tagId: tag.tagId, address: address, identities: identities,
            lockoutStartMilliseconds: wall, decidedAtMilliseconds: wall, lastRoundTripMilliseconds: max(0, roundTripMilliseconds),
            gateway: gateway, sequence: 0, appVersion: appVersion
        )
        event.clockSynced = clockSynced
        enqueue(DoorPendingEvent(event: event, record: .none, tagId: tag.tagId, rssi: nil, reason: nil), at: now, into: &actions)
        commitIfIdle(at: now, into: &actions)
    }
}
