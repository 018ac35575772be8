/// Where a person is relative to the door (see docs/presence.md).
public enum PresenceState: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not heard for `away_after_s`.
    case outside = 0
    /// Heard, but not at the door (or not yet proven).
    case nearby = 1
    /// At the door: a visit is open.
    case present = 2
    /// Was PRESENT, signal weak or lost: the leave debounce runs; the visit is still open.
    case unconfirmed = 3

    /// The name docs/presence.md uses, for logs.
    public var description: String {
        switch self {
        case .outside: "OUTSIDE"
        case .nearby: "NEARBY"
        case .present: "PRESENT"
        case .unconfirmed: "UNCONFIRMED"
        }
    }

    /// Whether a visit is open (a checkin was emitted and its checkout is still due).
    public var hasOpenVisit: Bool { self == .present || self == .unconfirmed }
}
