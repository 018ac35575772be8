import HCI

/// What the `ConnectScheduler` asks its driver to send (or to note). The driver submits
/// the HCI commands in order and reports each one's end with `commandFinished`.
public enum ConnectAction: Hashable, Sendable {
    case clearAcceptList
    case addToAcceptList(ConnectPeer)
    case removeFromAcceptList(ConnectPeer)
    /// LE Create Connection with initiator_filter_policy = accept list: no host timer.
    case createConnectionFromAcceptList
    /// LE Create Connection to one peer (`connect_mode = "direct"`).
    case createConnection(direct: ConnectPeer)
    case cancelCreateConnection
    /// LE Supported States forbid scanning while initiating: stop scanning before the
    /// create-connection and start again once initiating ended. `reason` is for the log.
    case pauseScanning(reason: String)
    case resumeScanning
    /// Read RSSI on a connection of a connection-tracked tag.
    case readRSSI(handle: UInt16, tagIndex: Int)
    /// A connection to a wanted tag is up (the driver starts the proof or keeps the link).
    case connected(tagIndex: Int, handle: UInt16)
    /// A connection nobody wants any more (the tag was unwanted while it connected, or a
    /// connection-tracked tag's person left): HCI Disconnect.
    case disconnect(handle: UInt16)
    /// A connection of a wanted tag ended (link loss for connection-tracked tags).
    case connectionLost(tagIndex: Int, handle: UInt16, reason: HCIStatus)
    /// Something the operator should see in the log.
    case log(String)
}
