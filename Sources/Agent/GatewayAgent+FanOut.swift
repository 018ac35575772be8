import Fleet
import GatewayCore
import Host
import Journal

/// The fan-out: what follows a happening, and in which order, written once each. The
/// drivers own their subsystems; the agent passes on what happened (docs/architecture.md,
/// "The agent").
extension GatewayAgent {
    /// A committed event: counted for the fleet, delivered, blinked.
    func eventCommitted(_ event: AttendanceEvent) {
        fleet.eventCommitted(sequence: event.sequence, type: event.type.rawValue, personId: event.userId, atMillis: event.decidedAtMilliseconds)
        delivery.kick()
        indicators.eventCommitted()
    }

    /// The controller came up or went down. Scanning: restored visits stop waiting for
    /// the scan before their timers decide (docs/presence.md), then the indicators show
    /// it (READY=1 the first time). Recovering: counted, then shown.
    func controllerStateChanged(_ state: HostState) {
        switch state {
        case .scanning(let info):
            perform(core.scanningStarted(at: loop.now))
            indicators.controllerUp()
            log.log(.notice, "controller up", [
                "address": info.address.description, "commands": info.commandFamily.description,
                "accept_list": "\(info.filterAcceptListSize)",
            ])
        case .recovering(let reason, let attempt):
            fleet.counters.controllerResets &+= 1
            indicators.controllerDown()
            log.log(attempt == 1 ? .warning : .info, "controller down", ["reason": reason.description, "attempt": "\(attempt)"])
        case .starting, .initializing:
            break
        }
    }

    /// The server's switch for the whole door (see docs/fleet.md): what it means is the
    /// core's decision (`DoorCore.setMode`); the fleet, the LEDs and STATUS show it.
    func setMode(_ mode: FleetMode) {
        guard mode != fleet.mode else { return }
        fleet.mode = mode
        perform(core.setMode(mode == .paused ? .paused : .active, at: loop.now))
        showMode()
    }
}
