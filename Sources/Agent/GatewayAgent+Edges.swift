import AttendanceEvents
import Config
import EventLoop
import Forwarder
import Journal
import LEDs
import Store

/// What follows a committed event and what the agent shows outside: the forwarder, the
/// LEDs, systemd's READY/STATUS/WATCHDOG.
extension GatewayAgent {
    // MARK: Events

    func eventCommitted(_ event: AttendanceEvent) {
        fleet.eventCommitted(sequence: event.sequence, type: event.type.rawValue, personId: event.userId, atMillis: event.decidedAtMilliseconds)
        forwarder?.kick()
        leds?.update { engine, now in engine.decision(at: now) }
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

    // MARK: LEDs

    func startLEDs() {
        guard let wiring = configuration.leds else { return }
        do {
            let lines = try GPIOLines(wiring: wiring)
            let driver = LEDDriver(loop: loop, output: lines)
            driver.onError = { [log] error in log.log(.error, "LED output failed", ["error": "\(error)"]) }
            // The store may already be in trouble: it is opened before the LEDs start.
            let storeTrouble = storeHealth.trouble != nil
            driver.update { engine, now in
                engine.lampTest(at: now)
                engine.setControllerDown(true, at: now)
                engine.setStoreTrouble(storeTrouble, at: now)
            }
            ledLines = lines
            self.leds = driver
        } catch {
            // The door keeps working without its lamps; the journal says why they are dark.
            log.log(.error, "LEDs unavailable", ["error": "\(error)"])
        }
    }

    func stopLEDs() {
        leds?.stop()
        ledLines?.release()
        leds = nil
        ledLines = nil
    }

    // MARK: Controller health

    func controllerUp() {
        watchdog?.controllerAnswered(at: loop.now)
        // Restored visits wait for the scan before their timers decide (docs/presence.md).
        perform(core.scanningStarted(at: loop.now))
        leds?.update { engine, now in
            engine.setControllerDown(false, at: now)
            engine.setScanning(true, at: now)
        }
        if !announcedReady {
            announcedReady = true
            notify(.ready)
        }
        updateStatus()
    }

    func controllerDown() {
        fleet.counters.controllerResets &+= 1
        watchdog?.controllerLost()
        leds?.update { engine, now in
            engine.setScanning(false, at: now)
            engine.setControllerDown(true, at: now)
        }
        updateStatus()
    }

    // MARK: Status and watchdog

    func scheduleStatus() {
        let period = watchdog.map { min($0.feedPeriod, Self.statusInterval) } ?? Self.statusInterval
        _ = loop.schedule(after: period) { [unowned self] in
            self.updateStatus()
            self.scheduleStatus()
        }
    }

    /// `scanning · 3 present · outbox 0`, the amber LED from the outbox, and the
    /// watchdog fed only while the controller answers.
    func updateStatus() {
        let now = loop.now
        let scanning = link?.host.isControllerAnswering ?? false
        if scanning { watchdog?.controllerAnswered(at: now) }
        var backlog = 0
        var amber: LEDPatternEngine.OutboxState = .empty
        if let forwarder, let status = try? forwarder.status() {
            backlog = status.backlog
            amber = status.amber.ledState
        } else if let store, let status = try? store.status(nowMillis: loop.wallMilliseconds) {
            backlog = status.backlog
        }
        leds?.update { engine, now in engine.setOutbox(amber, at: now) }
        var summary = scanning ? "scanning" : "controller unavailable"
        if fleet.mode == .paused { summary += " · paused" }
        summary += " · \(presence.openVisits) present · outbox \(backlog)"
        if let disk = storeStatusSummary { summary += " · \(disk)" }
        if !clockSynchronisedNow() { summary += " · clock unsynchronised" }
        var messages: [ServiceNotification] = [.status(summary)]
        if watchdog?.shouldFeed(at: now) == true { messages.append(.watchdog) }
        notify(messages)
    }

    func notify(_ notification: ServiceNotification) {
        notify([notification])
    }

    func notify(_ notifications: [ServiceNotification]) {
        guard let notifier else { return }
        do {
            try notifier.notify(notifications)
        } catch {
            log.log(.debug, "sd_notify failed", ["error": "\(error)"])
        }
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
