import EventLoop
import GatewayCore

extension GatewayAgent {
    /// The one reading of the wall clock the core takes: its time (followed when stepped)
    /// and, unless `timeOnly` (for every batch of reports: asking the kernel costs system
    /// calls), whether it is synchronised.
    func readClock(timeOnly: Bool = false) -> WallClockReading {
        WallClockReading(wallMilliseconds: loop.wallMilliseconds,
                         synchronised: timeOnly ? nil : clockSync.isSynchronised)
    }

    /// Whether events decided now say their clock was synchronised, after a fresh reading
    /// (a change is logged once). For every STATUS line and the fleet's snapshots. A replay
    /// decides on its recorded clock: always synchronised.
    func clockSynchronisedNow() -> Bool {
        guard link?.replayTimeline == nil else { return true }
        perform(core.observeClock(readClock(), at: loop.now))
        return core.clockSynced
    }
}
