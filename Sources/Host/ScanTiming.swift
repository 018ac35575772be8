/// Scan interval and window, in the controller's 0.625 ms units.
public struct ScanTiming: Hashable, Sendable, CustomStringConvertible {
    public var interval: UInt16
    public var window: UInt16

    public init(interval: UInt16, window: UInt16) {
        self.interval = interval
        self.window = window
    }

    public var intervalMilliseconds: Double { Double(interval) * 0.625 }
    public var windowMilliseconds: Double { Double(window) * 0.625 }
    public var duty: Double { Double(window) / Double(interval) }

    public var description: String { "interval=\(intervalMilliseconds)ms window=\(windowMilliseconds)ms" }

    /// Smallest value the specification allows (2.5 ms).
    public static let minimumUnits: UInt16 = 0x0004
    /// Largest interval used (10.24 s, the legacy command's maximum).
    public static let maximumUnits: UInt16 = 0x4000
    /// Mean of the 0–10 ms random advDelay the link layer adds to every advertising event.
    public static let meanAdvertisingDelayMs = 5
    /// Duty used for active scanning unless overridden.
    public static let activeDuty = 0.9

    /// Derives scan timing from the tags' advertising interval.
    ///
    /// The rule:
    /// - **Interval = 1.5 × (tag interval + 5 ms)**, clamped to 2.5 ms … 10.24 s.
    ///   A tag's events are really spaced by its interval plus a random 0–10 ms
    ///   advDelay (mean 5 ms). The scanner listens on one advertising channel per
    ///   interval, and loses what arrives while it switches channel. At a ratio of
    ///   1.5 the interval is as far as it can be from a multiple of the tag's period,
    ///   so successive events of a tag land half a period apart in the scanner's
    ///   cycle: a tag whose event fell into a channel switch once cannot keep falling
    ///   into it (phase lock), whatever the advDelay draws. And since the interval is
    ///   longer than the longest gap between two events of a tag (interval + 10 ms),
    ///   every channel's dwell hears every tag in range at least once, so each tag
    ///   yields an RSSI sample on each channel every cycle.
    /// - **Window = interval (100 % duty) in passive mode**: the radio listens all the
    ///   time, so no advertisement is missed but for the channel switches.
    /// - **Window = 90 % of the interval in active mode**: active scanning transmits
    ///   (SCAN_REQ) and waits for the response; the 10 % gap gives the controller
    ///   room for connection events (the proof handshake) and coexistence without
    ///   cutting a request/response exchange short.
    /// - **`--duty d` (0.1–1.0) sets window = d × interval**, for a Pi whose Wi-Fi
    ///   shares the antenna with Bluetooth and needs air time. Values outside the
    ///   range are clamped to it (the configuration validates them before).
    public static func derive(_ settings: ScanSettings) -> ScanTiming {
        // Integer microseconds so the rule rounds the same on every platform.
        let tagMs = max(settings.tagIntervalMs, 20)
        let periodMicroseconds = min(tagMs, 20_000) * 1000 + meanAdvertisingDelayMs * 1000
        let intervalMicroseconds = periodMicroseconds * 3 / 2
        let interval = clampUnits((intervalMicroseconds + 312) / 625)
        let duty: Double
        if let override = settings.dutyOverride, override.isFinite {
            duty = min(max(override, 0.1), 1.0)
        } else {
            duty = settings.mode == .active ? activeDuty : 1.0
        }
        let window = clampUnits(Int((Double(interval) * duty).rounded()))
        return ScanTiming(interval: interval, window: min(window, interval))
    }

    private static func clampUnits(_ units: Int) -> UInt16 {
        UInt16(min(max(units, Int(minimumUnits)), Int(maximumUnits)))
    }
}
