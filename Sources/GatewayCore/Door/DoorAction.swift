import EventLoop
import HCI

/// What the door core asks its driver to do, in the order given (see `DoorCore`).
public enum DoorAction: Sendable {
    /// Store these events and presence records in ONE transaction, then report how it
    /// went with `DoorCore.commitFinished`.
    case commit(DoorCommitBatch)
    /// Save presence records without events (a checkpoint), then report with
    /// `DoorCore.checkpointFinished`.
    case checkpoint(DoorCheckpoint)
    /// The connect scheduler should (no longer) hold a connection to the tag.
    case want(tagIndex: Int, peer: ConnectPeer, tracked: Bool)
    case unwant(tagIndex: Int)
    /// Run the proof handshake on a new connection.
    case startProof(DoorProofStart)
    /// Close a connection nobody needs.
    case disconnect(handle: UInt16)
    case log(DoorLogLine)
    /// Something to show or count outside (LEDs, the fleet's counters, the forwarder).
    case indicate(DoorIndication)
    /// Put this signed sighting report on the site bus for the neighbouring doors
    /// (docs/neighbours.md); about once a second, only with neighbours configured.
    case publishSightings([UInt8])
    /// The one timer the driver keeps: call `DoorCore.tick` at this instant (nil: none).
    case armTimer(Instant?)
}
