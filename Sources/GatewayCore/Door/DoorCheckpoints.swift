/// What presence is saved between events (docs/presence.md, "Restart rules"): the records
/// of persons whose state changed without an event, and one `LastHeardDigest` of those
/// only heard. The cost of a checkpoint follows what changed, not the roster.
struct DoorCheckpoints: Sendable {
    /// Persons whose state changed without an event since their record was saved.
    var changedPersons: Set<String> = []
    /// Persons heard since their record was saved: their last sample goes in the digest.
    var heardPersons: Set<String> = []
    /// Something was heard since the last checkpoint (else the digest is unchanged).
    var heardSinceCheckpoint = false
    /// Whether a digest row may be stored (it goes once every record is fresher).
    var digestStored = true
    /// Relaxed checkpoints since the last durable one.
    var relaxedCheckpoints = 0
    /// What the checkpoint handed to the driver covered, until it answers.
    var inFlight: (changed: Set<String>, digestWritten: Bool, durable: Bool)?

    var nextIsDurable: Bool { relaxedCheckpoints + 1 >= DoorCore.durableCheckpointEvery }

    mutating func changed(_ personId: String) { changedPersons.insert(personId) }

    mutating func heard(_ personId: String) {
        heardPersons.insert(personId)
        heardSinceCheckpoint = true
    }

    /// The person's record went with an event: nothing of theirs is left to save.
    mutating func saved(_ personId: String) {
        changedPersons.remove(personId)
        heardPersons.remove(personId)
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

    /// How the store answered the last `.checkpoint`; nil when it was saved.
    public mutating func checkpointFinished(error: String?) -> [DoorAction] {
        guard let done = checkpoints.inFlight else { return [] }
        checkpoints.inFlight = nil
        if let error {
            return [.log(DoorLogLine(.error, "cannot save presence state", ["error": error]))]
        }
        checkpoints.changedPersons.subtract(done.changed)
        checkpoints.heardPersons.subtract(done.changed)
        // Persons still waiting for their event keep their marks (they were left out).
        checkpoints.heardSinceCheckpoint = false
        checkpoints.digestStored = done.digestWritten
        checkpoints.relaxedCheckpoints = done.durable ? 0 : checkpoints.relaxedCheckpoints + 1
        return []
    }

    /// At a clean shutdown: every person's record, durably (the digest is then not
    /// needed), except those whose event the store has not taken.
    public mutating func saveAll(personIds: [String]) -> [DoorAction] {
        checkpoints.changedPersons.formUnion(personIds)
        checkpoints.changedPersons.formUnion(checkpoints.heardPersons)
        checkpoints.heardPersons.removeAll()
        var actions: [DoorAction] = []
        checkpoint(durable: true, into: &actions)
        return actions
    }
}
