/// The server's switch for the whole door (docs/fleet.md).
public enum DoorMode: String, Hashable, Sendable {
    case active
    case paused
}
