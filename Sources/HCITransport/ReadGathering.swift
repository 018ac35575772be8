import EventLoop
import HCI

/// How long advertising reports may gather before the next read, from the rate they
/// arrive at: sans-IO, the `TransportDriver` asks it each time it pauses reading
/// (docs/architecture.md, "Transport").
///
/// A controller sends every advertising report as a packet of its own, and each wake-up
/// costs far more than a report does: a poll, a read, a context switch, and the door's
/// tables gone cold in the caches while the agent slept; and at a crowded door a read's
/// check-ins share one commit and its wait for the disk. A pause long enough that a
/// wake-up finds about `reportsPerWakeUp` reports waiting shares those costs among them.
/// The defaults are chosen by scripts/bench-door, which compares a crowded door's live
/// cost with matching the same reports alone (`scan` replayed); its figures are in
/// docs/benchmarks.md. A busy door is read about once a second, a quiet one at
/// `longest`. Presence decisions take seconds (a window of 3 s, two samples at least),
/// so up to a second more is little to them; a
/// command's answer and a tag's are never kept waiting (the driver reads at once while
/// one is awaited). What waits longest is the first event of a new connection (up to
/// `longest`), which only delays a proof's start.
public struct ReadGathering: Sendable, Equatable {
    /// Reports a wake-up should find waiting. The user channel's receive buffer
    /// (`UserChannelSocket.receiveBufferBytes`) holds several times this many.
    public var reportsPerWakeUp: Int
    /// The shortest pause: a door busier than `reportsPerWakeUp` per `shortest` is read
    /// again at once whenever a receive stops at its read limit.
    public var shortest: Duration
    /// The longest pause: what a quiet door's reports and a connection's first event
    /// may wait at most.
    public var longest: Duration

    /// When the current measurement began (the last pause's start).
    private var measuringSince: Instant?
    /// Advertising reports read since `measuringSince`.
    private var reportsSince = 0

    public init(reportsPerWakeUp: Int = 3_000, shortest: Duration = .milliseconds(40), longest: Duration = .seconds(1)) {
        precondition(reportsPerWakeUp > 0 && shortest > .zero && longest >= shortest)
        self.reportsPerWakeUp = reportsPerWakeUp
        self.shortest = shortest
        self.longest = longest
    }

    /// The gathering a transport's kernel buffer allows. A socket's holds what a second
    /// brings even at 10,000 reports a second (the user channel's is enlarged,
    /// `UserChannelSocket.receiveBufferBytes`; TCP's grows by itself). A serial line's is
    /// the tty's, about 64 KiB: some 1,400 reports of 45 bytes before flow control stops
    /// the controller, which then drops reports. So on `serial:` a wake-up aims for 1,000
    /// (45 KB) and waits at most half a second.
    public static func forTransport(_ spec: TransportSpec) -> ReadGathering {
        switch spec {
        case .serial: ReadGathering(reportsPerWakeUp: 1_000, longest: .milliseconds(500))
        case .userChannel, .tcp, .btsnoop: ReadGathering()
        }
    }

    /// A pause of a fixed length, whatever the rate.
    public static func fixed(_ pause: Duration) -> ReadGathering {
        ReadGathering(reportsPerWakeUp: 1, shortest: pause, longest: pause)
    }

    /// Counts the advertising reports of a read (paused or not).
    public mutating func read(advertisingReports count: Int) {
        reportsSince += count
    }

    /// Reading pauses now: for how long. The rate is measured over the time since the last
    /// pause began (the pause and any reads at once after it), so a burst shortens the next
    /// pause at once and a lull lengthens it.
    public mutating func pause(at now: Instant) -> Duration {
        defer {
            measuringSince = now
            reportsSince = 0
        }
        guard let since = measuringSince, now > since else { return shortest }
        guard reportsSince > 0 else { return longest }
        let elapsed = Double((now - since).nanosecondsClamped)
        let pause = elapsed * Double(reportsPerWakeUp) / Double(reportsSince)
        return min(longest, max(shortest, .nanoseconds(Int64(min(pause, Double(longest.nanosecondsClamped))))))
    }
}
