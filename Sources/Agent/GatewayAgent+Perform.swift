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
            perform(core.commitFinished(storage.commit(batch), at: loop.now))
        case let .checkpoint(checkpoint):
            perform(core.checkpointFinished(error: storage.save(checkpoint), at: loop.now))
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
        case let .publishSightings(payload):
            // On the site bus (QoS 0, never stored): dropped while it is down, which the
            // neighbours take as a silent door (docs/neighbours.md).
            siteBus.publishSighting(payload)
        }
    }

    private func indicate(_ indication: DoorIndication) {
        switch indication {
        case let .committed(event):
            eventCommitted(event)
        case .proofFailed:
            indicators.proofFailed()
        case let .proofFinished(ok):
            if ok { fleet.counters.proofsOK &+= 1 } else { fleet.counters.proofsFailed &+= 1 }
        }
    }
}
