import AttendanceEvents
import EventLoop
import Fleet
import GatewayCore
import HCI
import Host
import HostDrivers
import Journal

/// The fan-out: who hears what happened, and in which order, written here once for each
/// kind of happening rather than implied by who was built first (docs/architecture.md,
/// "The agent: drivers and fan-out" and "Who hears what, in which order"). The drivers
/// own their subsystems; the agent passes on what happened. Parties the door does not
/// have (no `[advertise]`, no tag needing a connection, no enrolment asked for yet) are
/// skipped.
extension GatewayAgent {
    // MARK: The controller and its data path

    /// The controller's one data path: the proofs', else enrolment's own (built at the
    /// first request on a door that makes no connections).
    var dataPath: DataPathDriver? { proofs?.dataPath ?? enrolment?.dataPath }

    /// Before `link.start()`: the link's happenings go to the functions below.
    func hearController(_ link: ControllerDriver) {
        link.onStateChanged = { [unowned self] state in self.hostStateChanged(state) }
        link.onEvent = { [unowned self] event, now in self.controllerEvent(event, at: now) }
        link.onACLData = { [unowned self] packet, now in self.dataPath?.receiveACL(packet, now: now) }
    }

    /// Whenever a data path is made (proofs, or enrolment's own): its happenings go to the
    /// functions below.
    func hearDataPath(_ dataPath: DataPathDriver) {
        dataPath.onConnectionClosed = { [unowned self] handle, reason, now in
            self.dataPathClosed(handle, reason: reason, at: now)
        }
        dataPath.onPeripheral = { [unowned self] action, now in self.enrolment?.peripheralAction(action, now: now) }
    }

    /// A host state change, in this order:
    /// 1. the door beacon: after a reset its advertising commands are queued before the
    ///    connect scheduler's (the controller takes commands in order);
    /// 2. the data path, then the connect scheduler (`ProofDrivers.hostStateChanged(_:)`):
    ///    a reset ends handshakes as `controller_reset` and tracked links as lost;
    /// 3. the agent itself (`controllerStateChanged(_:)`): the controller up or down for
    ///    the core, the LEDs and systemd, with connections already following the controller;
    /// 4. an enrolment window, which a reset ends.
    func hostStateChanged(_ state: HostState) {
        doorBeacon?.hostStateChanged(state)
        if let proofs {
            proofs.hostStateChanged(state)
        } else {
            dataPath?.hostStateChanged(state, now: loop.now)
        }
        controllerStateChanged(state)
        enrolment?.hostStateChanged(state)
    }

    /// An HCI event the host passes up: the data path, then the connect scheduler
    /// (`ProofDrivers.handle(_:now:)`).
    func controllerEvent(_ event: HCIEvent, at now: Instant) {
        if let proofs {
            proofs.handle(event, now: now)
        } else {
            dataPath?.handle(event, now: now)
        }
    }

    /// The data path closed a connection: a handshake on it ends with the reason, then an
    /// enrolment window (its GATT server, then its session) hears of it. Each acts only on
    /// its own connections (central ones for proofs, peripheral ones for enrolment).
    func dataPathClosed(_ handle: UInt16, reason: LEDataPath.CloseReason, at now: Instant) {
        proofs?.connectionClosed(handle, reason: reason)
        enrolment?.connectionClosed(handle, now: now)
    }

    // MARK: The door

    /// A committed event: counted for the fleet, delivered (the server, then the bus, which
    /// also publishes the presence it changed), blinked.
    func eventCommitted(_ event: AttendanceEvent) {
        fleet.eventCommitted(sequence: event.sequence, type: event.type.rawValue, personId: event.userId, atMillis: event.decidedAtMilliseconds)
        delivery.kick()
        siteBus.eventCommitted(event)
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
    func setMode(_ mode: DoorMode) {
        guard mode != fleet.mode else { return }
        fleet.mode = mode
        perform(core.setMode(mode, at: loop.now))
        showMode()
    }
}
