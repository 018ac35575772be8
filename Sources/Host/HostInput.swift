import HCI

/// What happened outside the host: the driver (run loop) reports it.
public enum HostInput: Sendable {
    case transportOpened
    case packetReceived(HCIPacket)
    /// The transport failed or closed; also to be reported when a reopen attempt fails.
    case transportClosed(reason: String)
    /// `nextDeadline` was reached (calling it early or late is harmless).
    case timerFired
}
