import EventLoop
import GatewayCore

extension GatewayAgent {
    /// Reads whether the system clock is synchronised now, logging a change once (not on
    /// every reading). Asked when an event is committed (its body says so when not) and
    /// for every STATUS line. A replay decides on its recorded clock: always synchronised.
    func clockSynchronisedNow() -> Bool {
        guard !followsReplayClock, link?.replayTimeline == nil else { return true }
        switch clockSyncState.observe(synchronised: clockSync.isSynchronised) {
        case .unsynchronised?:
            log.log(.warning, "system clock not synchronised; events carry clockSynced=false until it is")
        case .synchronised?:
            log.log(.notice, "system clock synchronised")
        case nil:
            break
        }
        return clockSyncState.isSynchronised
    }
}
