/// A reading of the system's wall clock, taken by the driver when it hands time in.
public struct WallClockReading: Hashable, Sendable {
    public var wallMilliseconds: Int64
    /// The kernel says the clock is synchronised (events say so when it is not); nil when
    /// not asked this time (the last answer holds). Asking costs system calls, so the
    /// driver asks at the timer and for the status line, not for every batch of reports.
    public var synchronised: Bool?

    public init(wallMilliseconds: Int64, synchronised: Bool?) {
        self.wallMilliseconds = wallMilliseconds
        self.synchronised = synchronised
    }
}
