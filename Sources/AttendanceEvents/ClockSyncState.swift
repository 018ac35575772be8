/// Whether events are being decided on a synchronised clock, and when that changes.
///
/// Events decided on an unsynchronised clock say so in their body (`"clockSynced": false`,
/// docs/event-api.md): their times may be far off (a Pi without a real-time clock before
/// NTP). The change is logged once per transition, not on every reading.
public struct ClockSyncState: Hashable, Sendable {
    public enum Change: Hashable, Sendable {
        /// The clock is (now) unsynchronised; also the first reading when it is.
        case unsynchronised
        /// Synchronised again after being unsynchronised.
        case synchronised
    }

    /// Until the first reading: assumed synchronised (nothing to flag yet).
    public private(set) var isSynchronised = true
    private var observed = false

    public init() {}

    /// Takes a reading; returns the change to report, if any.
    public mutating func observe(synchronised: Bool) -> Change? {
        defer {
            observed = true
            isSynchronised = synchronised
        }
        if !observed { return synchronised ? nil : .unsynchronised }
        guard synchronised != isSynchronised else { return nil }
        return synchronised ? .synchronised : .unsynchronised
    }
}
