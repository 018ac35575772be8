import EventLoop

/// An on/off timeline anchored at the instant its state began, so every blink starts
/// with "on" (the eye sees the change at once) and two gateways in the same state blink
/// the same way.
///
/// A pattern is a list of segments; a `repeating` pattern loops over them forever, a
/// one-shot pattern (a transient) is over after its last segment.
struct LEDPattern: Hashable, Sendable {
    struct Segment: Hashable, Sendable {
        var lit: Bool
        var duration: Duration
    }

    var segments: [Segment]
    var repeating: Bool

    /// The same level for ever.
    static func steady(_ lit: Bool) -> LEDPattern {
        LEDPattern(segments: [Segment(lit: lit, duration: .seconds(1))], repeating: true)
    }

    /// A blink starting with "on", repeating for as long as its state lasts.
    static func blink(on: Duration, off: Duration) -> LEDPattern {
        LEDPattern(segments: [Segment(lit: true, duration: on), Segment(lit: false, duration: off)], repeating: true)
    }

    /// `count` flashes of `flash` on, each followed by `flash` off; the trailing "off"
    /// is part of the pattern so the last flash stays visible over a lit base state.
    static func flashes(_ count: Int, flash: Duration) -> LEDPattern {
        var segments: [Segment] = []
        for _ in 0 ..< count {
            segments.append(Segment(lit: true, duration: flash))
            segments.append(Segment(lit: false, duration: flash))
        }
        return LEDPattern(segments: segments, repeating: false)
    }

    /// One period (repeating) or the whole pattern (one-shot), in nanoseconds.
    var lengthNanoseconds: Int64 {
        segments.reduce(0) { $0 &+ max(0, $1.duration.nanosecondsClamped) }
    }

    /// The level at `instant` for a pattern that began at `start`, and the instant the
    /// current segment ends (`nil`: steady, nothing ever changes). One-shot patterns
    /// return `nil` once over: the layer below shows through.
    func level(at instant: Instant, startedAt start: Instant) -> (lit: Bool, until: Instant?)? {
        let length = lengthNanoseconds
        // A pattern given a start in the future has not begun: treat as its first instant.
        let elapsed = max(0, instant.nanoseconds &- start.nanoseconds)
        if segments.count == 1 && repeating { return (segments[0].lit, nil) }
        guard length > 0 else { return nil }
        let position: Int64
        let periodStart: Int64
        if repeating {
            position = elapsed % length
            periodStart = instant.nanoseconds &- position
        } else {
            guard elapsed < length else { return nil }
            position = elapsed
            periodStart = start.nanoseconds
        }
        var segmentStart: Int64 = 0
        for segment in segments {
            let segmentEnd = segmentStart &+ max(0, segment.duration.nanosecondsClamped)
            if position < segmentEnd {
                return (segment.lit, Instant(nanoseconds: periodStart &+ segmentEnd))
            }
            segmentStart = segmentEnd
        }
        return nil
    }
}

extension LEDPattern {
    /// All LEDs, 300 ms, once at start.
    static let lampTest = LEDPattern(segments: [Segment(lit: true, duration: .milliseconds(300))], repeating: false)
    /// Green, two 100 ms blinks: a check-in or check-out was just decided.
    static let decisionBlinks = LEDPattern.flashes(2, flash: .milliseconds(100))
    /// Amber, 1 Hz: events waiting.
    static let waitingBlink = LEDPattern.blink(on: .milliseconds(500), off: .milliseconds(500))
    /// Green while the server has check-ins paused and the gateway scans: 1 Hz.
    static let pausedBlink = LEDPattern.blink(on: .milliseconds(500), off: .milliseconds(500))
    /// Amber, 4 Hz: events cannot be stored (disk trouble).
    static let storeTroubleBlink = LEDPattern.blink(on: .milliseconds(125), off: .milliseconds(125))
    /// Red, 4 Hz: controller down or recovering.
    static let controllerDownBlink = LEDPattern.blink(on: .milliseconds(125), off: .milliseconds(125))
    /// Red, three 100 ms flashes: a proof failed.
    static let proofFailureFlashes = LEDPattern.flashes(3, flash: .milliseconds(100))
}
