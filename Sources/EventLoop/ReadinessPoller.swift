#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How long a turn of the loop may wait for a descriptor.
enum PollWait {
    /// Not at all: a pending source has work, or time is virtual and moved by the test.
    case none
    /// Until the next timer's deadline.
    case until(Instant)
    /// Until a descriptor is ready: no timer is armed.
    case forever
}

/// Where the loop learns which descriptors are ready: poll(2) in production
/// (`SystemPoller`), a scripted backend on virtual time in tests (`ScriptedPoller`).
///
/// Internal: the loop's users never see it, and `pollfd` stays inside this module.
protocol ReadinessPoller: AnyObject {
    /// Fills each entry's `revents` and returns how many entries are ready (0 when the
    /// wait ended without any). Interrupted by a signal: 0, and the loop turns again.
    func wait(_ descriptors: inout [pollfd], _ wait: PollWait) throws(EventLoopError) -> Int
}

/// poll(2) on the loop's clock.
final class SystemPoller: ReadinessPoller {
    private let clock: any MonotonicClock

    init(clock: any MonotonicClock) {
        self.clock = clock
    }

    func wait(_ descriptors: inout [pollfd], _ wait: PollWait) throws(EventLoopError) -> Int {
        let timeout: Int32
        switch wait {
        case .none: timeout = 0
        case .until(let deadline): timeout = EventLoop.pollTimeout(until: deadline, now: clock.now)
        case .forever: timeout = -1
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        if ready < 0 {
            let error = errno
            if error == EINTR { return 0 }
            throw .systemCall("poll", errno: error)
        }
        return Int(ready)
    }
}
