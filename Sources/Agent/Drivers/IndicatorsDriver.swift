import Config
import EventLoop
import Journal
import LEDs

/// What the door shows outside (docs/leds.md, docs/logs-and-systemd.md): the three LEDs,
/// systemd's READY, RELOADING, STOPPING and STATUS, and the watchdog fed only while the
/// controller answers. It decides nothing about the door: it is told what happened and
/// asks `facts` for the status line's figures when it writes one.
final class IndicatorsDriver: AgentDriver {
    /// The status line's figures, read when a line is written.
    struct StatusFacts {
        var scanning: Bool
        var paused: Bool
        var present: Int
        var backlog: Int
        var outbox: LEDPatternEngine.OutboxState
        /// `read-only`, `full`, …: the store's trouble, nil when events are stored.
        var diskTrouble: String?
        var clockSynchronised: Bool
    }

    static let statusInterval: Duration = .seconds(5)

    private let loop: EventLoop
    var log: LogSink
    private let notifier: SystemdNotifier?
    private var watchdog: WatchdogGate?
    private let facts: () -> StatusFacts
    private var leds: LEDDriver?
    private var ledLines: GPIOLines?
    private var statusTimer: EventLoop.TimerHandle?
    /// READY=1 goes out once, when scanning first starts.
    private(set) var announcedReady = false
    /// The store's trouble as last told: the store is opened before the LEDs start.
    private var storeInTrouble = false

    init(loop: EventLoop, log: LogSink, notifier: SystemdNotifier?, watchdogInterval: Duration?, facts: @escaping () -> StatusFacts) {
        self.loop = loop
        self.log = log
        self.notifier = notifier
        watchdog = watchdogInterval.map { WatchdogGate(interval: $0) }
        self.facts = facts
    }

    /// The LEDs on their GPIO lines (none without `[leds]`), lamp test first; the store
    /// may already be in trouble, since it is opened before the LEDs start.
    private func startLEDs(_ wiring: LEDWiring?, storeTrouble: Bool) {
        guard let wiring else { return }
        do {
            let lines = try GPIOLines(wiring: wiring)
            ledLines = lines
            startLEDs(on: lines, storeTrouble: storeTrouble)
        } catch {
            // The door keeps working without its lamps; the journal says why they are dark.
            log.log(.error, "LEDs unavailable", ["error": "\(error)"])
        }
    }

    /// The LEDs on any output (a test's records what is shown).
    func startLEDs(on output: any LEDOutput, storeTrouble: Bool) {
        let driver = LEDDriver(loop: loop, output: output)
        driver.onError = { [unowned self] error in self.log.log(.error, "LED output failed", ["error": "\(error)"]) }
        driver.update { engine, now in
            engine.lampTest(at: now)
            engine.setControllerDown(true, at: now)
            engine.setStoreTrouble(storeTrouble, at: now)
        }
        leds = driver
    }

    /// The LEDs (`[leds]`), and the status line every `statusInterval` (more often when
    /// the watchdog needs feeding).
    func start(_ configuration: GatewayConfiguration) {
        startLEDs(configuration.leds, storeTrouble: storeInTrouble)
        scheduleStatus()
    }

    /// Nothing: `[leds]` applies on restart (the GPIO lines are held from start).
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {}

    func stop() {
        if let statusTimer { loop.cancel(statusTimer) }
        statusTimer = nil
        leds?.stop()
        ledLines?.release()
        leds = nil
        ledLines = nil
    }

    // MARK: What happened

    func controllerUp() {
        watchdog?.controllerAnswered(at: loop.now)
        leds?.update { engine, now in
            engine.setControllerDown(false, at: now)
            engine.setScanning(true, at: now)
        }
        if !announcedReady {
            announcedReady = true
            notify([.ready])
        }
        updateStatus()
    }

    func controllerDown() {
        watchdog?.controllerLost()
        leds?.update { engine, now in
            engine.setScanning(false, at: now)
            engine.setControllerDown(true, at: now)
        }
        updateStatus()
    }

    func eventCommitted() {
        leds?.update { engine, now in engine.decision(at: now) }
    }

    func proofFailed() {
        leds?.update { engine, now in engine.proofFailed(at: now) }
    }

    func storeTrouble(_ inTrouble: Bool) {
        storeInTrouble = inTrouble
        leds?.update { engine, now in engine.setStoreTrouble(inTrouble, at: now) }
        updateStatus()
    }

    /// Green blinks while the server has paused the door; `STATUS=` says it.
    func paused(_ paused: Bool) {
        leds?.update { engine, now in engine.setPaused(paused, at: now) }
        updateStatus()
    }

    /// SIGHUP: RELOADING=1 … READY=1, only once started: READY=1 means "scanning" (see
    /// docs/logs-and-systemd.md), and before that the first READY=1 still comes from the
    /// controller coming up. Returns what to call when the reload is over.
    func reloading() -> () -> Void {
        guard announcedReady else { return {} }
        notify([.reloading(at: loop.now)])
        return { [self] in notify([.ready]) }
    }

    func stopping() {
        notify([.stopping])
    }

    // MARK: Status and watchdog

    private func scheduleStatus() {
        let period = watchdog.map { min($0.feedPeriod, Self.statusInterval) } ?? Self.statusInterval
        statusTimer = loop.schedule(after: period) { [unowned self] in
            self.updateStatus()
            self.scheduleStatus()
        }
    }

    /// `scanning · 3 present · outbox 0`, the amber LED from the outbox, and the
    /// watchdog fed only while the controller answers.
    func updateStatus() {
        let now = loop.now
        let facts = facts()
        if facts.scanning { watchdog?.controllerAnswered(at: now) }
        leds?.update { engine, now in engine.setOutbox(facts.outbox, at: now) }
        var messages: [ServiceNotification] = [.status(Self.statusLine(facts))]
        if watchdog?.shouldFeed(at: now) == true { messages.append(.watchdog) }
        notify(messages)
    }

    static func statusLine(_ facts: StatusFacts) -> String {
        var line = facts.scanning ? "scanning" : "controller unavailable"
        if facts.paused { line += " · paused" }
        line += " · \(facts.present) present · outbox \(facts.backlog)"
        if let disk = facts.diskTrouble { line += " · disk trouble: \(disk)" }
        if !facts.clockSynchronised { line += " · clock unsynchronised" }
        return line
    }

    private func notify(_ notifications: [ServiceNotification]) {
        guard let notifier else { return }
        do {
            try notifier.notify(notifications)
        } catch {
            log.log(.debug, "sd_notify failed", ["error": "\(error)"])
        }
    }
}
