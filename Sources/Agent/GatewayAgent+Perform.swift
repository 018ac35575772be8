import EventLoop
import GatewayCore
import Journal
import Store

/// The driver's half of `DoorCore`: each action performed, in the order given. Answers
/// the store gives (commits, checkpoints) go straight back into the core, whose new
/// actions are performed in turn.
extension GatewayAgent {
    func perform(_ actions: [DoorAction]) {
        for action in actions { perform(action) }
    }

    func perform(_ action: DoorAction) {
        switch action {
        case let .commit(batch):
            perform(core.commitFinished(commit(batch), at: loop.now))
        case let .checkpoint(checkpoint):
            perform(core.checkpointFinished(error: save(checkpoint), at: loop.now))
        case let .want(tagIndex, peer, tracked):
            proofs?.connect.want(tagIndex: tagIndex, peer: peer, tracked: tracked)
        case let .unwant(tagIndex):
            proofs?.connect.unwant(tagIndex: tagIndex)
        case let .startProof(start):
            proofs?.startProof(on: start.handle, tagId: start.tagId, key: start.key, cachedHandles: start.cachedHandles, at: start.at)
        case let .disconnect(handle):
            proofs?.dataPath.disconnect(handle)
        case let .log(line):
            log.log(Severity(rawValue: line.level.rawValue) ?? .error, line.message, line.fields)
        case let .indicate(indication):
            indicate(indication)
        case let .armTimer(deadline):
            coreTimer.arm(at: deadline)
        }
    }

    /// Appends the batch's events (each body rendered with the sequence the store gives
    /// it) and writes its records, in one transaction.
    func commit(_ batch: DoorCommitBatch) -> DoorCommitResult {
        // Without a store (not open yet, or closed to be reopened) the health machine has
        // said so once already.
        guard let store else { return .failed(DoorStoreFailure(message: "no store", outboxFull: false, isDiskTrouble: true)) }
        var sequences: [Int64?] = []
        do {
            try storeHeldEvents()
            try store.commit { transaction throws(StoreError) in
                sequences = try self.append(batch, in: &transaction)
            }
        } catch {
            storeFailed(error)
            let outboxFull: Bool = if case .outboxFull = error { true } else { false }
            return .failed(DoorStoreFailure(message: error.description, outboxFull: outboxFull, isDiskTrouble: error.trouble != nil))
        }
        storeSucceeded()
        return .committed(sequences: sequences)
    }

    /// The batch's events (each body rendered with the sequence the store gives it) and
    /// records, in the caller's transaction; one sequence per event, nil where its key
    /// was stored already.
    func append(_ batch: DoorCommitBatch, in transaction: inout StoreTransaction) throws(StoreError) -> [Int64?] {
        var sequences: [Int64?] = []
        for event in batch.events {
            let sequence = try transaction.appendEvent(
                idempotencyKey: event.idempotencyKey, type: event.type.rawValue, personId: event.userId,
                createdAtMillis: event.decidedAtMilliseconds
            ) { sequence in
                var numbered = event
                numbered.sequence = sequence
                return Array(numbered.jsonBody().utf8)
            }
            sequences.append(sequence)
        }
        try write(batch.records, in: &transaction)
        return sequences
    }

    /// A checkpoint; nil when saved, else why not.
    func save(_ checkpoint: DoorCheckpoint) -> String? {
        guard let store else { return "no store" }
        let write: (inout StoreTransaction) throws(StoreError) -> Void = { [self] transaction throws(StoreError) in
            try self.write(checkpoint.records, in: &transaction)
        }
        do {
            // Held over a restart: stored ahead of any record written after them.
            try storeHeldEvents()
            if checkpoint.durable {
                try store.commit(write)
            } else {
                try store.commitRelaxed(write)
            }
        } catch {
            storeFailed(error)
            return error.description
        }
        storeSucceeded()
        return nil
    }

    private func write(_ records: [DoorRecordWrite], in transaction: inout StoreTransaction) throws(StoreError) {
        for record in records {
            switch record {
            case let .save(key, bytes): try transaction.savePresence(personId: key, record: bytes)
            case let .delete(key): try transaction.deletePresence(personId: key)
            }
        }
    }

    private func indicate(_ indication: DoorIndication) {
        switch indication {
        case let .committed(event):
            eventCommitted(event)
        case .proofFailed:
            leds?.update { engine, now in engine.proofFailed(at: now) }
        case let .proofFinished(ok):
            if ok { fleet.counters.proofsOK &+= 1 } else { fleet.counters.proofsFailed &+= 1 }
        }
    }
}
