import AttendanceEvents
import Config
import Fleet
import Forwarder
import GatewayCore

/// The agent's side of the server roster (see docs/fleet.md): RosterDriver requests and
/// decides; the agent merges what it puts in force with the file's persons, through the
/// path SIGHUP takes, and shows the mode.
extension GatewayAgent {
    /// At start, before presence is restored: the last valid roster from disk joins the
    /// file's persons at once (persons present before a restart stay known, so they keep
    /// their visit), and the first request goes out as soon as the loop runs.
    func startRoster() {
        guard let roster = beginRoster(file: configuration) else { return }
        configuration = configuration.merging(roster)
        // Nobody's state is known yet (it is restored next): no event can come of this.
        perform(core.reload(GatewayAgent.doorSetup(configuration, appVersion: options.appVersion), at: loop.now))
    }

    /// SIGHUP: the file just read, with the server persons in force that still fit beside
    /// it. `[server] roster` switched on starts the requests; switched off ends them.
    func mergingServerRoster(_ fresh: GatewayConfiguration) -> GatewayConfiguration {
        guard fresh.server?.roster == true else {
            if roster != nil {
                stopRoster()
                roster = nil
                log.log(.notice, "server roster off: persons from the file only")
                setMode(.active)
            }
            return fresh
        }
        guard let roster else {
            return fresh.merging(beginRoster(file: fresh))
        }
        return fresh.merging(roster.fileReloaded(fresh))
    }

    func stopRoster() {
        roster?.stop()
    }

    /// The heartbeat's and `status`'s `roster`.
    func rosterStatus() -> RosterStatus {
        roster?.status ?? fleet.roster
    }

    /// Green blinks while paused; `STATUS=` says it.
    func showMode() {
        indicators.paused(fleet.mode == .paused)
    }

    /// Creates the driver and starts it; returns the persisted roster to merge when it is
    /// still valid.
    private func beginRoster(file: GatewayConfiguration) -> ServerRoster? {
        guard let server = file.server, server.roster else { return nil }
        let driver = RosterDriver(
            loop: loop, log: log, appVersion: options.appVersion, file: file, stateDirectory: storage.stateDirectory,
            pollInterval: server.rosterPollInterval,
            hooks: RosterDriver.Hooks(
                apply: { [unowned self] merged in self.apply(merged) },
                setMode: { [unowned self] mode in self.setMode(mode) },
                beforeFetch: { [unowned self] in self.delivery.kick() },
                // The LEDs exist by then: show the mode.
                firstFetchDue: { [unowned self] in self.showMode() },
                counted: { [unowned self] counts in self.fleet.counters.rosterFetches = counts }
            )
        )
        roster = driver
        return driver.start()
    }
}
