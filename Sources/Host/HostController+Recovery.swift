import EventLoop
import HCI

extension HostController {
    /// Local teardown and the way back: drop every command (clients hear `.flushed`),
    /// forget half-joined reports, then either wait for the transport to be reopened
    /// or wait out the backoff and reset the controller again.
    mutating func beginRecovery(_ reason: RecoveryReason, now: Instant, transportClosed: Bool,
                                into actions: inout [HostAction]) {
        _ = flushCommands(into: &actions)
        reassembler.reset()
        probeOutstanding = false
        nextProbeAt = nil
        failedAttempts += 1
        counters.recoveries += 1
        let wait = configuration.backoff(forAttempt: failedAttempts)
        var reopening = transportClosed
        if transportClosed {
            phase = .closed
        } else if resetsSinceOpen >= configuration.resetsBeforeReopen {
            // Resets keep failing: the link itself may be wedged (a USB dongle
            // re-enumerating, a TCP peer gone half-open). Start over from the transport.
            reopening = true
            phase = .closed
            actions.append(.closeTransport)
        } else {
            resetsSinceOpen += 1
            phase = .waitingToReset(until: now + wait)
        }
        setState(.recovering(reason: reason, attempt: failedAttempts), into: &actions)
        actions.append(.log(.recovering(reason, attempt: failedAttempts, wait: wait, reopeningTransport: reopening)))
        if reopening { actions.append(.reopenTransport(after: wait)) }
    }
}
