import Config
import EventLoop
import Forwarder
import GatewayCore
import Journal
import LEDs
import Store

/// What follows a committed event (the fleet's counters, delivery, the LEDs, in that
/// order), delivery's start and reload, and the controller's health as the indicators
/// show it.
extension GatewayAgent {
    // MARK: Events

    func eventCommitted(_ event: AttendanceEvent) {
        fleet.eventCommitted(sequence: event.sequence, type: event.type.rawValue, personId: event.userId, atMillis: event.decidedAtMilliseconds)
        forwarder?.kick()
        indicators.eventCommitted()
    }

    // MARK: Forwarder

    func startForwarder() {
        guard let server = configuration.server else {
            log.log(.notice, "no [server]: events are stored and logged only")
            return
        }
        // Without a store, delivery starts when the store opens (GatewayAgent+StoreHealth).
        guard let store else { return }
        do {
            let forwarder = try Forwarder(
                store: store, loop: loop,
                configuration: ForwarderConfiguration(server: server, gateway: configuration.gateway, appVersion: options.appVersion),
                onEvent: { [unowned self, log, fleet] event in
                    fleet.forwarderEvent(event)
                    event.log(to: log)
                    // A damaged file found by delivery's reads is the door's disk trouble
                    // too: one policy (examined, rebuilt or moved aside with a salvage).
                    if case let .storeFailed(error) = event, error.trouble == .corrupt { self.storeFailed(error) }
                }
            )
            forwarder.onDelivered = { [fleet] created, delivered in fleet.delivered(createdAtMillis: created, deliveredAtMillis: delivered) }
            forwarder.start()
            self.forwarder = forwarder
            log.log(.info, "forwarding events", ["url": server.displayURL])
        } catch {
            // The events stay in the outbox; a fixed configuration and SIGHUP start delivery.
            log.log(.error, "cannot forward events; they are kept in the outbox", ["error": "\(error)"])
        }
    }

    func reloadForwarder(_ fresh: GatewayConfiguration) {
        guard let server = fresh.server else {
            forwarder?.stop()
            forwarder = nil
            return
        }
        let settings = ForwarderConfiguration(server: server, gateway: fresh.gateway, appVersion: options.appVersion)
        guard let forwarder else {
            startForwarder()
            return
        }
        do {
            try forwarder.reload(settings)
        } catch {
            log.log(.error, "forwarder settings not reloaded", ["error": "\(error)"])
        }
    }

    // MARK: Controller health

    func controllerUp() {
        // Restored visits wait for the scan before their timers decide (docs/presence.md).
        perform(core.scanningStarted(at: loop.now))
        indicators.controllerUp()
    }

    func controllerDown() {
        fleet.counters.controllerResets &+= 1
        indicators.controllerDown()
    }

    // MARK: Status

    /// The status line's figures: the controller, the server's mode, presence, the
    /// outbox (and the amber LED from delivery), the disk and the clock.
    func statusFacts() -> IndicatorsDriver.StatusFacts {
        var backlog = 0
        var amber: LEDPatternEngine.OutboxState = .empty
        if let forwarder, let status = try? forwarder.status() {
            backlog = status.backlog
            amber = status.amber.ledState
        } else if let store, let status = try? store.status(nowMillis: loop.wallMilliseconds) {
            backlog = status.backlog
        }
        return IndicatorsDriver.StatusFacts(
            scanning: link?.host.isControllerAnswering ?? false, paused: fleet.mode == .paused, present: presence.openVisits,
            backlog: backlog, outbox: amber, diskTrouble: storeHealth.trouble.map { "\($0)" },
            clockSynchronised: clockSynchronisedNow()
        )
    }
}

extension AmberIndication {
    var ledState: LEDPatternEngine.OutboxState {
        switch self {
        case .off: .empty
        case .blink: .waiting
        case .steady: .refused
        }
    }
}
