import AttendanceEvents

public enum DoorIndication: Hashable, Sendable {
    /// An event was committed: blink, count, kick the forwarder.
    case committed(AttendanceEvent)
    /// A handshake failed (the red LED's three flashes).
    case proofFailed
    /// A proof finished (the fleet's counters).
    case proofFinished(ok: Bool)
}
