import EventLoop

/// Lays a replay's recorded times onto the event loop's timeline: the first replayed
/// packet happens "now", when it is read, and every later one as long after it as it was
/// recorded. Presence then decides a capture as it happened — the leave timer of a
/// person who walked away runs in recorded seconds — however fast the file is read.
///
/// Never goes backwards (a capture's clock may have been set back mid-way; the engine
/// would take such a time as its newest anyway), and an absurd timestamp saturates
/// instead of overflowing.
public struct ReplayTimeline: Sendable {
    /// The loop's instant of the first replayed packet.
    public let origin: Instant
    /// That packet's recorded time, microseconds since the Unix epoch.
    public let originMicroseconds: Int64
    /// The newest instant handed out.
    public private(set) var latest: Instant

    public init(origin: Instant, recordedMicroseconds: Int64) {
        self.origin = origin
        originMicroseconds = recordedMicroseconds
        latest = origin
    }

    /// The loop instant of a packet recorded at `microseconds`.
    public mutating func instant(forRecorded microseconds: Int64) -> Instant {
        let later = microseconds > originMicroseconds
        let saturated: Int64 = later ? .max : .min
        let delta = microseconds.subtractingReportingOverflow(originMicroseconds)
        let nanoseconds = delta.overflow ? nil : delta.partialValue.multipliedReportingOverflow(by: 1000)
        let offset = nanoseconds.flatMap { $0.overflow ? nil : $0.partialValue } ?? saturated
        let sum = origin.nanoseconds.addingReportingOverflow(offset)
        let instant = Instant(nanoseconds: sum.overflow ? saturated : sum.partialValue)
        if instant > latest { latest = instant }
        return latest
    }
}
