import GatewayCore
import Journal
import Store

/// Open visits of persons who left the configuration while the agent was not running.
extension GatewayAgent {
    /// Commits the checkout of every restored-but-ignored record whose visit was open and
    /// whose person is no longer configured.
    ///
    /// The engine cannot decide these (it no longer knows the person), yet docs/presence.md
    /// promises that a restart never loses a checkout, and a SIGHUP that removes the person
    /// commits it at once (`PresenceEngine.reconfigure`); a restart after the same edit
    /// must too. As the engine does on restart, the visit is taken to have become
    /// UNCONFIRMED at the last sample heard before the stop (or when it was recorded as
    /// UNCONFIRMED); it is decided now. The record goes in the same transaction, so a
    /// crash in between commits it next time, under the same key.
    func checkOutRemovedPersons(_ ignored: [PersistedPresence]) {
        guard let store else { return }
        let configured = Set(configuration.persons.map(\.id))
        for record in ignored where record.state.hasOpenVisit && !configured.contains(record.personId) {
            guard let visitStart = record.visitStartWallMilliseconds else { continue }
            let now = systemClock.wallMilliseconds
            let unconfirmed = record.state == .unconfirmed ? record.unconfirmedSinceWallMilliseconds : nil
            // Clamped into [visit start, now]: a clock set back must not order them wrongly.
            let since = min(max(unconfirmed ?? record.lastSampleWallMilliseconds ?? visitStart, visitStart), max(now, visitStart))
            let probe = AttendanceEvent(
                id: EventIdentifier.uuidV4(), sequence: 0, type: .checkout, userId: record.personId, gateway: gatewayIdentity,
                timestampMilliseconds: since, decidedAtMilliseconds: max(now, since), visitStartMilliseconds: visitStart,
                beacon: BeaconInfo(tag: record.tagId, address: record.address, identities: []),
                rssiSeries: [], txPower: record.txPower, handshake: nil, appVersion: options.appVersion
            )
            var committed: AttendanceEvent?
            do {
                try store.commit { transaction throws(StoreError) in
                    _ = try transaction.appendEvent(
                        idempotencyKey: probe.idempotencyKey, type: AttendanceEventType.checkout.rawValue,
                        personId: record.personId, createdAtMillis: probe.decidedAtMilliseconds
                    ) { sequence in
                        var event = probe
                        event.sequence = sequence
                        event.clockSynced = clockSynchronisedNow()
                        committed = event
                        return Array(event.jsonBody().utf8)
                    }
                    try transaction.deletePresence(personId: record.personId)
                }
            } catch {
                // The record stays: the next start tries again.
                counters.commitFailures += 1
                log.log(.error, "cannot store the checkout of a removed person", ["person_id": record.personId, "error": error.description])
                storeFailed(error)
                continue
            }
            storeSucceeded()
            guard let committed else { continue }
            counters.checkouts += 1
            log.log(.notice, "checkout", [
                "event": "checkout", "person_id": committed.userId, "tag": record.tagId, "sequence": "\(committed.sequence)",
                "reason": "no longer configured",
                "visit_start": ISO8601Timestamp.format(millisecondsSinceEpoch: committed.visitStartMilliseconds),
            ])
            eventCommitted(committed)
        }
    }
}
