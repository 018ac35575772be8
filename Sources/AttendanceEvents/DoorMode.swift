/// Whether the door checks people in (docs/fleet.md): the server's switch for the whole
/// door, set by its roster (`active` when the roster says nothing). One type for the
/// door core, the roster, the heartbeat, the metrics and the status report.
public enum DoorMode: String, CaseIterable, Hashable, Sendable {
    case active
    case paused
}
