import EventLoop
import GatewayCore

extension GatewayAgent {
    /// The one reading of the wall clock the core takes: its time (followed when stepped)
    /// and, unless `timeOnly` (for every batch of reports: asking the kernel costs system
    /// calls) or the door replays a capture, whether it is synchronised. A replay's events
    /// carry the capture's recorded times (docs/transports.md): the system clock's
    /// synchronisation says nothing of them, and a warning that they carry
    /// `clockSynced=false` would be untrue.
    func readClock(timeOnly: Bool = false) -> WallClockReading {
        WallClockReading(wallMilliseconds: loop.wallMilliseconds,
                         synchronised: timeOnly || isReplay ? nil : clockSync.isSynchronised)
    }

    /// The door replays a btsnoop capture on its recorded clock.
    var isReplay: Bool {
        if case .btsnoop = configuration.bluetooth.transport { true } else { false }
    }

    /// Whether events decided now say their clock was synchronised, after a fresh reading
    /// (a change is logged once). For every STATUS line and the fleet's snapshots. A replay
    /// decides on its recorded clock: always synchronised.
    func clockSynchronisedNow() -> Bool {
        guard !isReplay else { return true }
        perform(core.observeClock(readClock(), at: loop.now))
        return core.clockSynced
    }
}
