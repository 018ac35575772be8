import CTimex

/// Whether the system clock is synchronised (NTP or PTP has disciplined it), as the
/// kernel knows it. A seam, so decisions about it are tested without the kernel.
public protocol ClockSyncSource: AnyObject {
    var isSynchronised: Bool { get }
}

/// The kernel's answer through `adjtimex(2)` with no modes set (a read): unsynchronised
/// when the call returns TIME_ERROR or the status has STA_UNSYNC. Until a time daemon
/// disciplines the clock (a Pi without a real-time clock after boot) that is the case.
public final class KernelClockSync: ClockSyncSource {
    public init() {}

    /// A failed call says nothing about the clock: not reported as unsynchronised.
    public var isSynchronised: Bool {
        ctimex_clock_synchronised() != 0
    }
}
