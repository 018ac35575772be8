import AttendanceEvents
import Config
import Fleet
import Forwarder
import GatewayCore

/// The agent's side of the server roster (see docs/fleet.md): RosterDriver requests and
/// decides; the agent merges what it puts in force with the file's persons, through the
/// path SIGHUP takes, and shows the mode.
extension GatewayAgent {
    /// At start, once the roster has started and before presence is restored: the last
    /// valid roster from disk joins the file's persons at once (persons present before a
    /// restart stay known, so they keep their visit).
    func mergeRosterFromDisk() {
        guard let persisted = roster?.inForce else { return }
        configuration = configuration.merging(persisted)
        // Nobody's state is known yet (it is restored next): no event can come of this.
        perform(core.reload(GatewayAgent.doorSetup(configuration, appVersion: options.appVersion), at: loop.now))
    }

    /// SIGHUP: the file just read, with the server persons in force that still fit beside
    /// it. `[server] roster` switched on starts the requests; switched off ends them.
    func mergingServerRoster(_ fresh: GatewayConfiguration) -> GatewayConfiguration {
        guard fresh.server?.roster == true else {
            if let roster {
                lifecycle.retire(roster)
                self.roster = nil
                log.log(.notice, "server roster off: persons from the file only")
                setMode(.active)
            }
            return fresh
        }
        guard let roster else {
            // Started at once, beside the file just read; what it kept on disk joins it.
            let driver = makeRoster(file: fresh)
            roster = driver
            startDrivers(fresh)
            return fresh.merging(driver?.inForce)
        }
        return fresh.merging(roster.fileReloaded(fresh))
    }

    /// The heartbeat's and `status`'s `roster`.
    func rosterStatus() -> RosterStatus {
        roster?.status ?? fleet.roster
    }

    /// Green blinks while paused; `STATUS=` says it.
    func showMode() {
        indicators.paused(fleet.mode == .paused)
    }

    /// The driver, built (and started through the list of drivers) when `[server] roster`
    /// asks for one; nil otherwise.
    func makeRoster(file: GatewayConfiguration) -> RosterDriver? {
        guard let server = file.server, server.roster else { return nil }
        return RosterDriver(
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
    }
}
