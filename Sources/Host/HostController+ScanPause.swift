import EventLoop
import HCI

extension HostController {
    /// Whether a client has scanning paused (the host's view: the disable may still be
    /// on its way to the controller).
    public var isScanningPaused: Bool { scanPauseRequested }

    /// Pauses or resumes scanning for a client, through the same command flow as every
    /// other command (LE Set Scan Enable or LE Set Extended Scan Enable, in the family
    /// chosen at bring-up). Controllers whose LE Supported States forbid scanning while
    /// initiating answer a create-connection with "command disallowed" unless scanning
    /// is off first; the connect scheduler pauses around its turns for them.
    ///
    /// Taken only while scanning; asking for the state already asked for sends nothing.
    /// Probes keep running while paused, so a stalled controller is still noticed.
    /// After any recovery the host scans again unpaused (the client sees the state change
    /// and asks again if it still wants the pause). A failed enable/disable is treated
    /// like any failed host command: recovery.
    public mutating func setScanningPaused(_ paused: Bool, now: Instant) -> [HostAction] {
        guard case .scanning(let info) = phase, paused != scanPauseRequested else { return [] }
        scanPauseRequested = paused
        let family = info.commandFamily
        flow.enqueue(scanEnablePacket(family, enable: !paused), opcode: scanOpcode(.enable, family), origin: .host)
        var actions = [HostAction]()
        pump(now: now, into: &actions)
        return actions
    }

    /// The answer to a pause or resume sent while scanning.
    mutating func scanEnableAnswered(_ opcode: Opcode, answer: Answer, now: Instant, into actions: inout [HostAction]) {
        guard answer.status == .success else {
            beginRecovery(answer.status.map { .commandFailed(opcode, $0) } ?? .malformedAnswer(opcode),
                          now: now, transportClosed: false, into: &actions)
            return
        }
    }
}
