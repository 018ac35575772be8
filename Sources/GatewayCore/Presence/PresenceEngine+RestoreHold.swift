import EventLoop

/// A restored visit waits for the scan (docs/presence.md, "Restart rules"): while the
/// agent was down, and until its controller scans again, the door heard nobody, and not
/// hearing a person because the door was deaf is not the person leaving. So the timers of
/// a visit restored open are not decided on until the scan has run for `lost_after_s`,
/// the silence the door itself takes as "gone" for a present person. A person heard in
/// that time keeps their visit; one not heard goes on as if their last sample before the
/// stop were their last: UNCONFIRMED at that sample plus `lost_after_s`, checked out
/// `leave_after_s` later, decided at once when that lies in the past. Each transition is
/// stamped with its state's own deadline; only the checkout's `decidedAt` is when it was
/// decided.
extension PresenceEngine {
    /// `restoreHoldUntil` before the scan starts.
    static let awaitingScan = Int64.max

    /// A visit whose person was last heard longer ago than this at the restore is not
    /// held: after an outage this long, staying and leaving cannot be told apart, and its
    /// timers decide at once as they say.
    public static let restoreHoldLimit: Duration = .seconds(3600)

    /// Whether visits restored open still wait for the scan.
    public var holdsRestoredVisits: Bool { restoreHoldsActive }

    /// The scan started (the controller came up). Visits restored before it are held
    /// until `lost_after_s` from now; later starts (a controller recovering) change nothing.
    public mutating func scanningStarted(at time: Instant) {
        guard scanningSince == Self.never else { return }
        let now = monotonic(time)
        scanningSince = now
        guard restoreHoldsActive else { return }
        restoreHoldUntil = Self.saturatingAdd(now, limits.lostAfter)
        for person in persons.indices where persons[person].restoreHeld { schedule(person: person) }
    }

    /// Holds a visit restored now, unless its person was last heard (or its visit or
    /// UNCONFIRMED began) longer than `restoreHoldLimit` before `now`.
    mutating func holdRestored(person: Int, lastKnown: Int64, now: Int64) {
        guard now &- lastKnown <= Self.restoreHoldLimit.nanosecondsClamped else { return }
        persons[person].restoreHeld = true
        restoreHoldsActive = true
        restoreHoldUntil = scanningSince == Self.never
            ? Self.awaitingScan : Self.saturatingAdd(scanningSince, limits.lostAfter)
    }

    /// Once the hold has passed, timers are the states' own again and nothing reads the
    /// slots' flags: they are cleared, once.
    mutating func releaseRestoreHolds(now: Int64) {
        guard restoreHoldsActive, restoreHoldUntil != Self.awaitingScan, now >= restoreHoldUntil else { return }
        for person in persons.indices { persons[person].restoreHeld = false }
        restoreHoldsActive = false
    }
}
