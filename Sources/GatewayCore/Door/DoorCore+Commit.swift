import AttendanceEvents
import EventLoop

/// The one committer: checkins, checkouts (of removed persons too) and spoof_suspected go
/// through `enqueue`, to the store in decision order, each with its person's record in
/// the same transaction; one failure policy for all (docs/reliability.md).
extension DoorCore {
    mutating func enqueue(_ item: DoorPendingEvent, at now: Instant, into actions: inout [DoorAction]) {
        // At the bound only checkouts still queue; check-ins are held before they are
        // decided (`applyHold`), so what arrives here is a spoof_suspected.
        if queue.isFull, item.event.type == .spoofSuspected {
            queue.refusedSpoofs += 1
            actions.append(.log(DoorLogLine(.error, "spoof_suspected not stored: too many events wait for the store",
                                            ["person_id": item.event.userId, "tag": item.tagId, "waiting": "\(queue.count)"])))
            return
        }
        queue.append(item)
        if queue.isFull, !queue.fullLogged {
            queue.fullLogged = true
            actions.append(.log(DoorLogLine(.error, "check-ins held: too many events wait for the store",
                                            ["waiting": "\(queue.count)", "maximum": "\(DoorCommitQueue.maximumHeld)"])))
        }
        applyHold()
    }

    /// Hands the queue to the store unless a batch is out or the last attempt failed
    /// (then the retry at the next housekeeping tick does).
    mutating func commitIfIdle(at now: Instant, into actions: inout [DoorAction]) {
        guard !queue.failing else { return }
        commitQueue(into: &actions)
    }

    mutating func retry(at now: Instant, into actions: inout [DoorAction]) {
        guard !queue.isEmpty else { return }
        commitQueue(into: &actions)
    }

    /// The driver knows the disk may take data again (a store reopened, a lock released):
    /// the waiting events go now rather than at the next housekeeping tick.
    public mutating func retryCommits(at now: Instant) -> [DoorAction] {
        var actions: [DoorAction] = []
        retry(at: now, into: &actions)
        return actions
    }

    mutating func commitQueue(into actions: inout [DoorAction]) {
        guard queue.inFlight == 0, !queue.isEmpty else { return }
        queue.inFlight = queue.count
        actions.append(.commit(DoorCommitBatch(events: queue.items.map(\.event), records: queueRecords().records)))
    }

    /// The records that go with the queue's events, and whose they are: the last item of a
    /// person says what their record is (newest first).
    func queueRecords() -> (records: [DoorRecordWrite], persons: Set<String>) {
        var records: [DoorRecordWrite] = []
        var written: Set<String> = []
        for item in queue.items.reversed() where written.insert(item.event.userId).inserted {
            let personId = item.event.userId
            switch item.record {
            case .current:
                if let record = presence.record(for: personId) {
                    records.append(.save(key: personId, record: record.encode()))
                } else {
                    records.append(.delete(key: personId))
                }
            case .delete:
                records.append(.delete(key: personId))
            case .none:
                written.remove(personId)
            }
        }
        return (records.reversed(), written)
    }

    /// How the store answered the last `.commit`.
    public mutating func commitFinished(_ result: DoorCommitResult, at now: Instant) -> [DoorAction] {
        guard queue.inFlight > 0 else { return [] }
        let count = queue.inFlight
        queue.inFlight = 0
        var actions: [DoorAction] = []
        switch result {
        case let .failed(failure):
            counters.commitFailures += 1
            queue.failing = true
            // Logged once, then summarised (`RepeatedFailureLog`): retried every 5 s for
            // as long as the trouble lasts.
            queue.failureIsDiskTrouble = failure.isDiskTrouble
            if case let .failing(repeats, since)? = queue.failureLog.failed(at: now) {
                let level: DoorLogLine.Level = failure.isDiskTrouble ? .debug : .error
                let waiting = "\(queue.count)", personId = queue.items.first?.event.userId ?? "-"
                actions.append(.log(repeats == 1
                    ? DoorLogLine(level, "cannot store event, will retry", [
                        "waiting": waiting, "person_id": personId, "outbox_full": "\(failure.outboxFull)",
                        "error": failure.message])
                    : DoorLogLine(level, "cannot store event, will retry", [
                        "waiting": waiting, "person_id": personId, "outbox_full": "\(failure.outboxFull)",
                        "error": failure.message, "failures": "\(repeats)",
                        "since_s": "\((now - since).components.seconds)"])))
            }
        case let .committed(sequences):
            queue.failing = false
            if case let .recovered(failures, since)? = queue.failureLog.succeeded() {
                // Disk trouble has its own lines (`events are stored again`, the agent's).
                let level: DoorLogLine.Level = queue.failureIsDiskTrouble ? .debug : .notice
                actions.append(.log(DoorLogLine(level, "events stored again", [
                    "failures": "\(failures)", "after_s": "\((now - since).components.seconds)",
                ])))
            }
            let done = queue.removeFirst(count)
            for (offset, item) in done.enumerated() {
                let personId = item.event.userId
                if item.record != .none, !queue.isWaiting(personId) { checkpoints.saved(personId) }
                let sequence = offset < sequences.count ? sequences[offset] : nil
                committed(item, sequence: sequence, into: &actions)
            }
            if !queue.isFull, queue.fullLogged {
                queue.fullLogged = false
                actions.append(.log(DoorLogLine(.notice, "check-ins no longer held: the store took the waiting events",
                                                ["spoof_suspected_refused": "\(queue.refusedSpoofs)"])))
                queue.refusedSpoofs = 0
            }
            applyHold()
            // Decided while the batch was out: they go now.
            commitQueue(into: &actions)
        }
        return actions
    }

    mutating func committed(_ item: DoorPendingEvent, sequence: Int64?, into actions: inout [DoorAction]) {
        let type = item.event.type
        guard let sequence else {
            // The key was stored before (a decision made again after a crash): nothing new.
            actions.append(.log(DoorLogLine(.info, "event already stored", ["person_id": item.event.userId, "type": type.rawValue])))
            return
        }
        var event = item.event
        event.sequence = sequence
        if type == .checkin {
            counters.checkins += 1
        } else if type == .checkout {
            counters.checkouts += 1
        } else {
            counters.spoofSuspected += 1
        }
        let line: DoorLogLine
        if type == .spoofSuspected {
            line = DoorLogLine(.notice, type.rawValue, [
                "event": type.rawValue, "person_id": event.userId, "tag": item.tagId, "sequence": "\(sequence)",
            ])
        } else if let reason = item.reason {
            line = DoorLogLine(.notice, type.rawValue, [
                "event": type.rawValue, "person_id": event.userId, "tag": item.tagId, "sequence": "\(sequence)",
                "reason": reason, "visit_start": ISO8601Timestamp.format(millisecondsSinceEpoch: event.visitStartMilliseconds),
            ])
        } else {
            line = DoorLogLine(.notice, type.rawValue, [
                "event": type.rawValue, "person_id": event.userId, "tag": item.tagId, "sequence": "\(sequence)",
                "rssi": item.rssi.map { "\($0)" } ?? "-",
                "visit_start": ISO8601Timestamp.format(millisecondsSinceEpoch: event.visitStartMilliseconds),
            ])
        }
        actions.append(.log(line))
        actions.append(.indicate(.committed(event)))
    }

    /// At shutdown: one last attempt (the driver performs it and answers at once); what
    /// is still not stored is said loudly. Their persons' records were not saved with
    /// their new state, so after the restart they are decided again.
    public mutating func shutdown(at now: Instant) -> [DoorAction] {
        var actions: [DoorAction] = []
        commitQueue(into: &actions)
        return actions
    }

    /// After the last attempt: what the store has still not taken, as the transaction it
    /// would have been (the events with their persons' records), plus the current record
    /// of everyone else in `personIds` (what the closing checkpoint would save, which the
    /// same disk will refuse); nil when nothing waits. The driver keeps it for the restart
    /// (docs/reliability.md, "Held over a restart").
    public func heldAtShutdown(personIds: [String]) -> DoorCommitBatch? {
        guard !queue.isEmpty else { return nil }
        var (records, persons) = queueRecords()
        for personId in personIds where !persons.contains(personId) && !queue.isWaiting(personId) {
            if let record = presence.record(for: personId) { records.append(.save(key: personId, record: record.encode())) }
        }
        return DoorCommitBatch(events: queue.items.map(\.event), records: records)
    }

    /// The lines that say what became of the events held at a stop: kept in `file` for
    /// the restart, or not kept (`failure` says why), then each event with its
    /// idempotency key, so an operator can find them again.
    public static func shutdownLines(held: DoorCommitBatch, keptIn file: String?, failure: String?) -> [DoorAction] {
        guard !held.events.isEmpty else { return [] }
        var checkins = 0, checkouts = 0, spoofs = 0
        for event in held.events {
            if event.type == .checkin {
                checkins += 1
            } else if event.type == .checkout {
                checkouts += 1
            } else {
                spoofs += 1
            }
        }
        let count = "\(held.events.count)"
        if let file {
            return [.log(DoorLogLine(.warning, "events not stored at shutdown: kept for the restart", [
                "count": count, "checkins": "\(checkins)", "checkouts": "\(checkouts)", "spoof_suspected": "\(spoofs)",
                "file": file,
            ]))]
        }
        var actions: [DoorAction] = [.log(DoorLogLine(.error, "events not stored at shutdown: their persons are decided again after the restart", [
            "count": count, "checkins": "\(checkins)", "checkouts": "\(checkouts)", "spoof_suspected": "\(spoofs)",
            "not_kept": failure ?? "-",
        ]))]
        for event in held.events {
            actions.append(.log(DoorLogLine(.error, "event not stored", [
                "idempotency_key": event.idempotencyKey, "type": event.type.rawValue, "person_id": event.userId,
                "timestamp": ISO8601Timestamp.format(millisecondsSinceEpoch: event.timestampMilliseconds),
                "visit_start": ISO8601Timestamp.format(millisecondsSinceEpoch: event.visitStartMilliseconds),
            ])))
        }
        return actions
    }
}

extension DoorPendingEvent.RecordWrite: Equatable {}
