import EventLoop

/// Runs the pattern engine on the event loop: shows the levels now, and arms one timer
/// for the engine's next change, so the lines are written only when something changes
/// (a steady state costs no wake-ups at all).
///
/// The agent tells it what happened with `update { engine, now in … }`; the time is the
/// loop's clock, read here and handed to the pure engine.
public final class LEDDriver {
    public private(set) var engine: LEDPatternEngine
    private let output: any LEDOutput
    private let loop: EventLoop
    private var timer: EventLoop.TimerHandle?
    /// What the lines show now, as far as we know (`nil`: unknown, write next time).
    public private(set) var shown: LEDLevels?
    /// Writes that failed; the first of a run of failures is reported through `onError`.
    public private(set) var failureCount = 0
    private var failing = false
    /// Called with the first error after a success (not on every blink of a broken line).
    public var onError: ((GPIOError) -> Void)?

    public init(loop: EventLoop, output: any LEDOutput, engine: LEDPatternEngine = LEDPatternEngine()) {
        self.loop = loop
        self.output = output
        self.engine = engine
    }

    /// Applies an input to the engine at the loop's current time, then shows the result.
    public func update(_ change: (inout LEDPatternEngine, Instant) -> Void) {
        change(&engine, loop.now)
        refresh()
    }

    /// Shows the levels for now and arms the timer for the next change.
    public func refresh() {
        let now = loop.now
        show(engine.levels(at: now))
        if let timer { loop.cancel(timer) }
        timer = nil
        if let next = engine.nextChange(after: now) {
            timer = loop.schedule(at: next) { [weak self] in
                self?.timer = nil
                self?.refresh()
            }
        }
    }

    /// Disarms the timer and darkens the LEDs (the owner releases the lines).
    public func stop() {
        if let timer { loop.cancel(timer) }
        timer = nil
        show(.allOff)
    }

    private func show(_ levels: LEDLevels) {
        guard levels != shown else { return }
        do {
            try output.show(levels)
            shown = levels
            failing = false
        } catch {
            shown = nil
            failureCount &+= 1
            if !failing { onError?(error) }
            failing = true
        }
    }
}
