#if canImport(Glibc)
import Glibc
#endif
import CTimex

/// Whether the system clock is synchronised (NTP or PTP has disciplined it), as the
/// kernel knows it. A seam, so decisions about it are tested without the kernel.
public protocol ClockSyncSource: AnyObject {
    var isSynchronised: Bool { get }
}

/// The kernel's answer through `adjtimex(2)` with no modes set (a read): unsynchronised
/// when the call returns TIME_ERROR or the status has STA_UNSYNC. Until a time daemon
/// disciplines the clock (a Pi without a real-time clock after boot) that is the case.
///
/// The unit's `ProtectClock=` refuses adjtimex even for reading (EPERM). Then
/// systemd-timesyncd's flag file answers where timesyncd runs (it exists once the clock
/// is synchronised); with another time daemon nothing can tell, and the clock is not
/// reported as unsynchronised (no event is flagged on a guess).
public final class KernelClockSync: ClockSyncSource {
    public init() {}

    public var isSynchronised: Bool {
        let state = ctimex_clock_synchronised()
        if state >= 0 { return state == 1 }
        guard access(Self.timesyncDirectory, F_OK) == 0 else { return true }
        return access(Self.timesyncDirectory + "/synchronized", F_OK) == 0
    }

    static let timesyncDirectory = "/run/systemd/timesync"
}
