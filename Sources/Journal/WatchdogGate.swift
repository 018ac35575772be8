import EventLoop

/// Decides when to send `WATCHDOG=1`: at half the service's WatchdogSec, and only while
/// the Bluetooth controller has answered its probe recently (see docs/logs-and-systemd.md).
///
/// A controller that stops answering therefore stops the keep-alives, and systemd restarts
/// the service after WatchdogSec — the last resort when resets and re-initialisation have
/// not brought the controller back. Pure: the agent calls `shouldFeed(at:)` on a timer of
/// `feedPeriod` and reports probe answers with their times.
public struct WatchdogGate: Sendable {
    /// WatchdogSec, from WATCHDOG_USEC.
    public let interval: Duration
    /// How old the last answer may be for the controller to count as answering.
    public let answerFreshness: Duration
    private var lastAnswer: Instant?
    private var lastFeed: Instant?

    /// - Parameter answerFreshness: longer than the probe period; by default the whole
    ///   watchdog interval.
    public init(interval: Duration, answerFreshness: Duration? = nil) {
        self.interval = interval
        self.answerFreshness = answerFreshness ?? interval
    }

    /// The period at which to ask `shouldFeed(at:)`: half the interval, as systemd advises.
    public var feedPeriod: Duration { interval / 2 }

    /// The controller answered a probe (or any command) at `instant`.
    public mutating func controllerAnswered(at instant: Instant) {
        if lastAnswer.map({ instant > $0 }) ?? true { lastAnswer = instant }
    }

    /// The controller is known to be down: stop feeding at once, not only when the last
    /// answer grows old.
    public mutating func controllerLost() {
        lastAnswer = nil
    }

    /// Whether to send `WATCHDOG=1` now; records the feed when it says yes.
    ///
    /// Calls between the timer's ticks (the agent asks on every status change, e.g. when
    /// the controller comes back) are held off for only half a `feedPeriod`: holding them
    /// off for a whole one let such a call shift the next feed by up to a period, so that
    /// after a recovery two feeds could lie almost a whole WatchdogSec apart, and any delay
    /// of the loop on a busy machine had systemd kill a healthy agent.
    public mutating func shouldFeed(at instant: Instant) -> Bool {
        guard let lastAnswer, instant - lastAnswer <= answerFreshness else { return false }
        if let lastFeed, instant - lastFeed < feedPeriod / 2 { return false }
        lastFeed = instant
        return true
    }
}
