import EventLoop

/// Turns what the agent knows (scanning, controller down, outbox, decisions, proof
/// failures, fatal configuration) into the LED timelines of docs/leds.md.
///
/// Pure: every input carries the instant it happened, and `levels(at:)` /
/// `nextChange(after:)` are functions of the inputs and the instant asked about. A
/// driver sets the lines at `nextChange` only; tests step a virtual clock.
///
/// ## Priorities when several states apply
///
/// Each LED is decided on its own, from the highest layer that applies:
///
/// | LED   | highest first |
/// | ----- | ------------- |
/// | green | lamp test (on) > fatal (off) > decision blinks > 1 Hz while scanning, healthy and paused by the server / steady on while scanning with a healthy controller > off |
/// | amber | lamp test (on) > fatal (off) > events cannot be stored (4 Hz) > refused/dead letters (steady) > waiting (1 Hz) > off |
/// | red   | lamp test (on) > fatal (steady) > proof-failure flashes > controller down (4 Hz) > off |
///
/// Transients (lamp test, decision blinks, proof flashes) overlay the steady state for
/// their length and then the steady state shows again, in its own phase. A fatal
/// configuration error darkens green and amber: the agent is exiting and nothing they
/// would say is true any more. A new decision or proof failure restarts its pattern.
/// Blinks are anchored at the instant their state began, so they always start "on".
public struct LEDPatternEngine: Sendable {
    /// The outbox as amber shows it.
    public enum OutboxState: Hashable, Sendable, CustomStringConvertible {
        /// Empty with the server reachable, or no server configured: amber off.
        case empty
        /// Events waiting: server unreachable or retrying: amber 1 Hz.
        case waiting
        /// The server refuses the gateway (401/403) or dead letters exist: amber steady.
        case refused

        public var description: String {
            switch self {
            case .empty: "empty"
            case .waiting: "waiting"
            case .refused: "refused"
            }
        }
    }

    private var lampTestStart: Instant?
    private var fatalSince: Instant?
    private var scanning = false
    private var controllerDownSince: Instant?
    private var outbox: OutboxState = .empty
    private var outboxSince: Instant = .zero
    private var storeTroubleSince: Instant?
    private var decisionStart: Instant?
    private var proofFailureStart: Instant?
    /// Check-ins paused by the server since then (green blinks at 1 Hz while scanning).
    private var pausedSince: Instant?

    /// All dark: not scanning, outbox empty, controller not known to be down.
    public init() {}

    // MARK: Inputs

    /// All LEDs on for 300 ms from `instant` (at start, so a dead LED is seen).
    public mutating func lampTest(at instant: Instant) {
        lampTestStart = instant
    }

    /// Scanning started or stopped. Green is steady while scanning and the controller is
    /// not down.
    public mutating func setScanning(_ isScanning: Bool, at instant: Instant) {
        scanning = isScanning
    }

    /// The Bluetooth controller went down (or is recovering), or answers again.
    public mutating func setControllerDown(_ isDown: Bool, at instant: Instant) {
        if isDown {
            // Keep the phase of a blink already running: repeated reports do not restart it.
            if controllerDownSince == nil { controllerDownSince = instant }
        } else {
            controllerDownSince = nil
        }
    }

    /// The outbox's state; the amber blink's phase begins when the state changes.
    public mutating func setOutbox(_ state: OutboxState, at instant: Instant) {
        guard state != outbox else { return }
        outbox = state
        outboxSince = instant
    }

    /// The server paused check-ins, or resumed them (see docs/fleet.md).
    public mutating func setPaused(_ isPaused: Bool, at instant: Instant) {
        if isPaused {
            if pausedSince == nil { pausedSince = instant }
        } else {
            pausedSince = nil
        }
    }

    /// Events cannot be stored (disk full, read-only, corrupt or locked database), or
    /// can again: amber blinks at 4 Hz over whatever the outbox says while it lasts.
    public mutating func setStoreTrouble(_ inTrouble: Bool, at instant: Instant) {
        if inTrouble {
            // Keep the phase of a blink already running.
            if storeTroubleSince == nil { storeTroubleSince = instant }
        } else {
            storeTroubleSince = nil
        }
    }

    /// A check-in or check-out was decided: green blinks twice.
    public mutating func decision(at instant: Instant) {
        decisionStart = instant
    }

    /// A proof failed or a spoof is suspected: red flashes three times.
    public mutating func proofFailed(at instant: Instant) {
        proofFailureStart = instant
    }

    /// A fatal configuration error: red steady, the others dark, until the agent exits.
    public mutating func fatalConfiguration(at instant: Instant) {
        if fatalSince == nil { fatalSince = instant }
    }

    // MARK: Outputs

    /// Which LEDs are lit at `instant`.
    public func levels(at instant: Instant) -> LEDLevels {
        var levels = LEDLevels.allOff
        for color in LEDColor.allCases {
            levels[color] = layer(color, at: instant).lit
        }
        return levels
    }

    /// The first instant after `instant` at which `levels(at:)` differs from
    /// `levels(at: instant)`, or `nil` if nothing will change without a new input.
    public func nextChange(after instant: Instant) -> Instant? {
        let current = levels(at: instant)
        var cursor = instant
        // Segment boundaries are not always visible changes (a lamp test ending over a
        // lit green); walk a few of them. Every blink edge is a change, so this ends fast.
        for _ in 0 ..< 32 {
            guard let boundary = nextBoundary(after: cursor) else { return nil }
            if levels(at: boundary) != current { return boundary }
            cursor = boundary
        }
        return cursor
    }

    /// The earliest instant after `instant` at which some LED's deciding layer or
    /// segment ends, or a transient given in the future begins.
    private func nextBoundary(after instant: Instant) -> Instant? {
        var earliest: Instant?
        func consider(_ candidate: Instant?) {
            guard let candidate, candidate > instant else { return }
            if earliest.map({ candidate < $0 }) ?? true { earliest = candidate }
        }
        for color in LEDColor.allCases {
            consider(layer(color, at: instant).until)
        }
        for start in [lampTestStart, fatalSince, decisionStart, proofFailureStart, controllerDownSince, pausedSince, storeTroubleSince] {
            consider(start)
        }
        return earliest
    }

    /// The deciding layer for one LED: its level and when that may change.
    private func layer(_ color: LEDColor, at instant: Instant) -> (lit: Bool, until: Instant?) {
        if let start = lampTestStart, start <= instant, let level = LEDPattern.lampTest.level(at: instant, startedAt: start) {
            return level
        }
        if let since = fatalSince, since <= instant {
            return (color == .red, nil)
        }
        switch color {
        case .green:
            if let start = decisionStart, start <= instant, let level = LEDPattern.decisionBlinks.level(at: instant, startedAt: start) {
                return level
            }
            let healthy = controllerDownSince.map { $0 > instant } ?? true
            guard scanning && healthy else { return (false, nil) }
            if let since = pausedSince, since <= instant {
                return LEDPattern.pausedBlink.level(at: instant, startedAt: since) ?? (true, nil)
            }
            return (true, nil)
        case .amber:
            if let since = storeTroubleSince, since <= instant {
                return LEDPattern.storeTroubleBlink.level(at: instant, startedAt: since) ?? (false, nil)
            }
            switch outbox {
            case .empty: return (false, nil)
            case .refused: return (true, nil)
            case .waiting: return LEDPattern.waitingBlink.level(at: instant, startedAt: outboxSince) ?? (false, nil)
            }
        case .red:
            if let start = proofFailureStart, start <= instant, let level = LEDPattern.proofFailureFlashes.level(at: instant, startedAt: start) {
                return level
            }
            if let since = controllerDownSince, since <= instant {
                return LEDPattern.controllerDownBlink.level(at: instant, startedAt: since) ?? (false, nil)
            }
            return (false, nil)
        }
    }
}
