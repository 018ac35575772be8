/// Whether the gateway checks people in (see docs/fleet.md): `paused` while the server's
/// roster says so; kept here so every report reads it from one place.
public enum FleetMode: String, Hashable, Sendable {
    case active
    case paused
}
