import EventLoop

/// What presence is saved between events (docs/presence.md, "Restart rules"): the records
/// of persons whose state changed without an event, and one `LastHeardDigest` of those
/// only heard. The cost of a checkpoint follows what changed, not the roster.
struct DoorCheckpoints: Sendable {
    /// Persons whose state changed without an event since their record was saved.
    var changedPersons: Set<String> = []
    /// Persons heard since their record was saved: their last sample goes in the digest.
    /// Only shrinks through `forgetHeard`, which keeps `heardMarks` true.
    private(set) var heardPersons: Set<String> = []
    /// Per matcher tag index: the `heardEpoch` in which the tag's person was last put in
    /// `heardPersons`. A report of a tag marked in this epoch does not hash its person's
    /// id again (the hot path: one set insertion per report otherwise). Any removal from
    /// `heardPersons` starts a new epoch, so a mark never hides a person who left the set.
    private var heardMarks: [UInt32] = []
    private var heardEpoch: UInt32 = 1
    /// Something was heard since the last checkpoint (else the digest is unchanged).
    var heardSinceCheckpoint = false
    /// Whether a digest row may be stored (it goes once every record is fresher).
    var digestStored = true
    /// Relaxed checkpoints since the last durable one.
    var relaxedCheckpoints = 0
    /// What the checkpoint handed to the driver covered, until it answers.
    var inFlight: (changed: Set<String>, digestWritten: Bool, durable: Bool)?
    /// Failed checkpoints, for the journal.
    var failureLog = RepeatedFailureLog()

    var nextIsDurable: Bool { relaxedCheckpoints + 1 >= DoorCore.durableCheckpointEvery }

    mutating func changed(_ personId: String) { changedPersons.insert(personId) }

    /// The person was heard, through the tag at `tagIndex`. The person's id is asked for
    /// only when the tag's mark is new: on the hot path, most reports find it set and
    /// never touch the tag's configuration (a cold cache line, and a retained string).
    mutating func heard(_ personId: @autoclosure () -> String, tagIndex: Int) {
        heardSinceCheckpoint = true
        guard tagIndex >= 0 else {
            heardPersons.insert(personId())
            return
        }
        if tagIndex < heardMarks.count {
            if heardMarks[tagIndex] == heardEpoch { return }
        } else {
            // Grows once per roster to its largest tag index heard.
            heardMarks.append(contentsOf: repeatElement(0, count: tagIndex + 1 - heardMarks.count))
        }
        heardMarks[tagIndex] = heardEpoch
        heardPersons.insert(personId())
    }

    /// The person's record went with an event: nothing of theirs is left to save.
    mutating func saved(_ personId: String) {
        changedPersons.remove(personId)
        if heardPersons.remove(personId) != nil { newHeardEpoch() }
    }

    /// These persons' records were saved (or all of them, nil): they leave `heardPersons`.
    mutating func forgetHeard(_ personIds: Set<String>?) {
        if let personIds {
            guard !personIds.isEmpty else { return }
            heardPersons.subtract(personIds)
        } else {
            heardPersons.removeAll()
        }
        newHeardEpoch()
    }

    /// Tag indices now name other tags (a new roster): no mark holds.
    mutating func rosterChanged() {
        heardMarks.removeAll()
        newHeardEpoch()
    }

    private mutating func newHeardEpoch() {
        heardEpoch &+= 1
        if heardEpoch == 0 {
            // Wrapped: old marks could match again.
            for index in heardMarks.indices { heardMarks[index] = 0 }
            heardEpoch = 1
        }
    }
}

extension DoorCore {
    /// Builds a checkpoint. Persons with an event waiting for the store are left out (and
    /// stay marked): their record is saved with that event, never ahead of it, so a
    /// restart never finds a visit open whose checkin was not stored.
    mutating func checkpoint(durable: Bool, into actions: inout [DoorAction]) {
        guard checkpoints.inFlight == nil else { return }
        let changes = checkpoints
        guard !changes.changedPersons.isEmpty || changes.heardSinceCheckpoint
            || (changes.digestStored && changes.heardPersons.isEmpty) else { return }
        var records: [DoorRecordWrite] = []
        var covered: Set<String> = []
        for personId in changes.changedPersons where !queue.isWaiting(personId) {
            covered.insert(personId)
            if let record = presence.record(for: personId) {
                records.append(.save(key: personId, record: record.encode()))
            } else {
                records.append(.delete(key: personId))
            }
        }
        var digest = LastHeardDigest()
        for personId in changes.heardPersons where !covered.contains(personId) && !queue.isWaiting(personId) {
            if let wall = presence.lastHeardWallMilliseconds(of: personId) { digest.lastHeard[personId] = wall }
        }
        if !digest.lastHeard.isEmpty {
            records.append(.save(key: LastHeardDigest.storageKey, record: digest.encode()))
        } else if changes.digestStored {
            records.append(.delete(key: LastHeardDigest.storageKey))
        }
        guard !records.isEmpty else { return }
        checkpoints.inFlight = (covered, !digest.lastHeard.isEmpty, durable)
        actions.append(.checkpoint(DoorCheckpoint(records: records, durable: durable)))
    }

    /// How the store answered the last `.checkpoint`; nil when it was saved. A failure that
    /// repeats is logged once, then summarised (`RepeatedFailureLog`).
    public mutating func checkpointFinished(error: String?, at now: Instant) -> [DoorAction] {
        guard let done = checkpoints.inFlight else { return [] }
        checkpoints.inFlight = nil
        if let error {
            switch checkpoints.failureLog.failed(at: now) {
            case let .failing(repeats, since)?:
                if repeats == 1 { return [.log(DoorLogLine(.error, "cannot save presence state", ["error": error]))] }
                return [.log(DoorLogLine(.error, "cannot save presence state", [
                    "error": error, "failures": "\(repeats)", "since_s": "\((now - since).components.seconds)",
                ]))]
            default:
                return []
            }
        }
        var actions: [DoorAction] = []
        if case let .recovered(failures, since)? = checkpoints.failureLog.succeeded() {
            actions.append(.log(DoorLogLine(.notice, "presence state saved again",
                                            ["failures": "\(failures)", "after_s": "\((now - since).components.seconds)"])))
        }
        checkpoints.changedPersons.subtract(done.changed)
        checkpoints.forgetHeard(done.changed)
        // Persons still waiting for their event keep their marks (they were left out).
        checkpoints.heardSinceCheckpoint = false
        checkpoints.digestStored = done.digestWritten
        checkpoints.relaxedCheckpoints = done.durable ? 0 : checkpoints.relaxedCheckpoints + 1
        return actions
    }

    /// At a clean shutdown: every person's record, durably (the digest is then not
    /// needed), except those whose event the store has not taken.
    public mutating func saveAll(personIds: [String]) -> [DoorAction] {
        checkpoints.changedPersons.formUnion(personIds)
        checkpoints.changedPersons.formUnion(checkpoints.heardPersons)
        checkpoints.forgetHeard(nil)
        var actions: [DoorAction] = []
        checkpoint(durable: true, into: &actions)
        return actions
    }
}
