import HCI

/// What the driver must do, in order.
public enum HostAction: Sendable {
    case send(HCIPacket)
    case closeTransport
    /// Open the transport again after this wait, then report `.transportOpened` (or
    /// `.transportClosed` if that fails).
    case reopenTransport(after: Duration)
    /// Reports from one event (extended fragments already joined).
    case advertisingReports([LEAdvertisingReport])
    /// Events for the layers above (connections, disconnections, completed packets,
    /// LE events the host itself does not use).
    case event(HCIEvent)
    /// ACL data for the layers above.
    case aclData(HCIPacket)
    /// The end of a command submitted with `submit`.
    case commandFinished(HostCommandResult)
    case stateChanged(HostState)
    case log(HostLogEvent)
}
