import EventLoop
import HCI

/// Per-person presence at the door (see docs/presence.md) as a sans-IO state machine.
///
/// Inputs are samples (from `TagMatcher` matches), the passing of time (`advance(to:)`),
/// proof results and configuration reloads; outputs are `PresenceEvent`s. Time is always
/// handed in: the engine never reads a clock.
///
/// Filter: a person's signal is the strongest filtered RSSI of their tags; a tag's filtered
/// RSSI at t is the median of its samples in `(t − window, t]`, valid only with at least
/// `minSamples` of them. For an even count the median is the mean of the two middle
/// samples rounded down (toward the weaker signal), so two samples of −70 and −69 give
/// −70, which does not exceed an `enter_rssi` of −70.
///
/// When the filter is looked at: on every sample of the person, on a proof, and at the
/// person's timer deadlines. Samples ageing out of the window while no new sample
/// arrives do not by themselves move a person; silence is what `lost_after_s` and
/// `away_after_s` are for.
///
/// Timers: each person has at most one deadline (NEARBY: away, PRESENT: lost,
/// UNCONFIRMED: leave), kept in a min-heap, so `advance(to:)` and `nextDeadline` cost
/// O(log n) per due timer, not a scan of every person. The driver arms one event-loop
/// timer at `nextTransition()` and calls `advance(to:)` when it fires. `nextDeadline`,
/// the heap's first entry, may be earlier than any real deadline (a stale entry, or one
/// that samples have made early); `nextTransition()` first moves such entries to their
/// real deadline, and `advance` skips any that remain. Calling `advance` late is fine:
/// state times are the deadlines themselves and only `decidedAt` is the call's time.
///
/// Hot path: `sample(tagIndex:…)` does integer work only — an array lookup, a ring
/// buffer of the tag's samples (bounded by `samplesPerTag`, in one flat array for all
/// tags), one pass over the window that tells whether its median is above the state's
/// threshold (no sort) — and allocates nothing unless an event results.
///
/// Time must not go backwards: an input older than the newest one seen is treated as
/// happening at that newest time.
public struct PresenceEngine: Sendable {
    public internal(set) var settings: PresenceSettings
    /// Turns decisions' instants into wall-clock milliseconds; set at `init` or `restore`.
    public var wallClock: WallClockMapping
    public internal(set) var counters = Counters()
    /// While set, no visit starts: NEARBY never becomes PRESENT (the door is paused, or
    /// its store refuses events). Open visits go on and end with their checkout.
    public var checkinsHeld = false

    public struct Counters: Hashable, Sendable {
        /// Samples taken into a tag's window.
        public var samples = 0
        /// Samples for a tag index no person carries (e.g. a matcher newer than the engine).
        public var unknownTag = 0
        /// Samples with an RSSI outside −127…20 dBm: not a real measurement, ignored.
        public var invalidRSSI = 0
        public var checkins = 0
        public var checkouts = 0
    }

    // Storage shared by the engine's files (one concern each).
    var persons: [PersonSlot] = []
    var tags: [TagSlot] = []
    /// Matcher tag index → slot in `tags`, −1 for none.
    var slotByTagIndex: [Int32] = []
    var personById: [String: Int32] = [:]
    /// All tags' rings, `capacity` entries per tag slot: times and RSSI (dBm). Times are
    /// milliseconds after `ringEpoch` (see `PresenceEngine+Filter`): half the memory of
    /// nanoseconds, for rings that grow with persons × tags × samples
    /// (the peak RSS target: docs/benchmarks.md).
    var ringTimes: [Int32] = []
    var ringRSSI: [Int8] = []
    /// The instant (ns) ring times count from; set by the first sample, moved forward
    /// before offsets could overflow. Kept across `build` so a reload can copy rings.
    var ringEpoch = PresenceEngine.never
    var capacity: Int
    var minSamples: Int
    /// The settings in the units the hot path compares (ns, dBm), computed once.
    var limits: Limits
    var heap = DeadlineHeap()
    /// The newest time any input carried: later inputs never go before it.
    var latest = Int64.min
    /// Some restored visit may still be held (`PresenceEngine+RestoreHold`): while false,
    /// no slot's `restoreHeld` is read (a cold field, off the hot path).
    var restoreHoldsActive = false
    /// Until when held visits wait: `awaitingScan` before the scan starts.
    var restoreHoldUntil = PresenceEngine.never
    /// When the scan first started, `never` before it.
    var scanningSince = PresenceEngine.never
    /// The neighbouring doors' part of the decision (`PresenceEngine+Neighbours`); nil
    /// when none are configured.
    var neighbourhood: Neighbourhood?

    struct Limits: Sendable {
        var enter: Int
        var exit: Int
        var window: Int64
        var lostAfter: Int64
        var leaveAfter: Int64
        var awayAfter: Int64
        var proofTTL: Int64

        init(_ settings: PresenceSettings) {
            enter = settings.enterRSSI
            exit = settings.exitRSSI
            // Negative durations make no sense; zero is the most they can mean.
            window = max(settings.window.nanosecondsClamped, 0)
            lostAfter = max(settings.lostAfter.nanosecondsClamped, 0)
            leaveAfter = max(settings.leaveAfter.nanosecondsClamped, 0)
            awayAfter = max(settings.awayAfter.nanosecondsClamped, 0)
            proofTTL = max(settings.proofTTL.nanosecondsClamped, 0)
        }
    }

    /// Tag indices at or above this are ignored (a million tags is far beyond any door).
    public static let maximumTagIndex = 1 << 20

    /// Absent values in the slots' times.
    static let never = Int64.min

    // Slot layout: Swift lays stored properties out in declaration order, so each slot
    // starts with what a sample of a person already heard reads or writes (`sample` →
    // `fireDue`/`deadline` → `append` → `evaluate` → `schedule`), small fields packed
    // together, and ends with what only transitions, proofs, reloads and records read.
    // At a busy door the slots go cold between two batches of reports: every cache line
    // a sample touches is a miss, so the hot fields share as few lines as they can.

    struct TagSlot: Sendable {
        // Hot: 31 bytes, written by every sample.
        var lastSample = PresenceEngine.never
        var address = BluetoothAddress(rawValue: 0)
        var person: Int32
        /// Ring: index of the oldest sample (relative to the tag's base) and sample count.
        var head: Int32 = 0
        var count: Int32 = 0
        var addressType = AddressType.publicDevice
        var txPower: Int8?
        // Cold: identity and proof, read on transitions and proofs.
        var id: String
        var matcherIndex: Int
        var proofAt = PresenceEngine.never
        var proofRoundTripMs = 0
        var lockedUntil = PresenceEngine.never
    }

    struct PersonSlot: Sendable {
        // Hot: what `deadline`, `schedule` and `evaluate` read for a sample of the person,
        // a NEARBY person's in the first 32 bytes, then what PRESENT and UNCONFIRMED add.
        var lastSample = PresenceEngine.never
        /// The time of this person's live heap entry, `never` when none.
        var scheduledAt = PresenceEngine.never
        /// The person's tag slots are `firstTagSlot ..< firstTagSlot + tagCount`: `build`
        /// lays out each person's tags one after another, so the range is kept inline
        /// rather than as an array, whose separate buffer would be one more cache miss
        /// per sample.
        var firstTagSlot: Int32
        var tagCount: Int32
        var state = PresenceState.outside
        var requireProof: Bool
        var waitingReported = false
        /// The tag slot whose signal decided the last transition of the visit.
        var decidingTag: Int32
        var visitStart = PresenceEngine.never
        var unconfirmedSince = PresenceEngine.never
        // Cold: read when events and records are made.
        var id: String
        /// The visit's start in wall-clock milliseconds, fixed at its checkin: the checkout
        /// repeats it exactly (it is in the idempotency key) even when the wall clock was
        /// stepped in between (NTP's first sync on a Pi without a real-time clock).
        var visitStartWall = PresenceEngine.never
        /// The deciding tag's window when UNCONFIRMED began: the checkout's `rssiSeries`.
        var unconfirmedSeries: [Int8] = []
        /// A visit restored open whose timers wait for the scan (`PresenceEngine+RestoreHold`).
        /// Read only while `restoreHoldsActive`.
        var restoreHeld = false

        /// The person's tag slots, in configuration order.
        var tagSlots: Range<Int> { Int(firstTagSlot) ..< Int(firstTagSlot) + Int(tagCount) }
    }

    public init(settings: PresenceSettings, persons: [PresencePerson],
                wallClock: WallClockMapping = WallClockMapping(anchor: .zero, wallMilliseconds: 0)) {
        self.settings = settings
        self.wallClock = wallClock
        capacity = settings.ringCapacity
        minSamples = settings.effectiveMinSamples
        limits = Limits(settings)
        build(persons: persons)
    }

    /// Lays out the slots for `persons`; every person OUTSIDE. Duplicate person ids and
    /// tag indices keep their first occurrence (the configuration refuses them anyway).
    mutating func build(persons newPersons: [PresencePerson]) {
        persons = []
        tags = []
        personById = [:]
        // Sized at once, not grown: a server roster lays out thousands of persons per switch.
        persons.reserveCapacity(newPersons.count)
        tags.reserveCapacity(newPersons.count)
        personById.reserveCapacity(newPersons.count)
        var maxIndex = -1
        for person in newPersons where personById[person.id] == nil {
            let personSlot = Int32(persons.count)
            let firstTagSlot = Int32(tags.count)
            // Indices are TagMatcher positions, so small; a wild one would size the
            // lookup table below, so it is refused rather than trusted.
            for tag in person.tags where tag.index >= 0 && tag.index < Self.maximumTagIndex {
                tags.append(TagSlot(person: personSlot, id: tag.id, matcherIndex: tag.index))
                maxIndex = max(maxIndex, tag.index)
            }
            let tagCount = Int32(tags.count) - firstTagSlot
            personById[person.id] = personSlot
            persons.append(PersonSlot(firstTagSlot: firstTagSlot, tagCount: tagCount, requireProof: person.requireProof,
                                      decidingTag: tagCount > 0 ? firstTagSlot : -1, id: person.id))
        }
        // Only as large as the largest index some tag uses; a hostile index was filtered.
        slotByTagIndex = Array(repeating: -1, count: maxIndex + 1)
        for (slot, tag) in tags.enumerated() where slotByTagIndex[tag.matcherIndex] < 0 {
            slotByTagIndex[tag.matcherIndex] = Int32(slot)
        }
        ringTimes = Array(repeating: 0, count: tags.count * capacity)
        ringRSSI = Array(repeating: 0, count: tags.count * capacity)
        heap.removeAll(keepingCapacity: false)
        openVisits = 0
        neighbourhood?.layOut(personIds: persons.map(\.id))
    }

    /// Counts open visits afresh after states were set wholesale (restore, reconfigure).
    mutating func recountOpenVisits() {
        openVisits = persons.reduce(0) { $0 + ($1.state.hasOpenVisit ? 1 : 0) }
    }

    // MARK: Queries

    /// The person's state; nil for an unknown id.
    public func state(of personId: String) -> PresenceState? {
        personById[personId].map { persons[Int($0)].state }
    }

    /// Persons with an open visit (PRESENT or UNCONFIRMED), for the status line: kept as
    /// states change, so the status tick does not walk the roster.
    public internal(set) var openVisits = 0

    public var personCount: Int { persons.count }

    /// The earliest time `advance(to:)` may have something to do; nil when no timer runs.
    /// May be early: see `nextTransition()`.
    public var nextDeadline: Instant? { heap.first.map { Instant(nanoseconds: $0.time) } }

    /// The earliest time a person's state can change with no sample: the time to arm the
    /// timer for. Samples leave a person's timer entry where it was (`DeadlineHeap`), so
    /// the heap's first entry is often early: a person heard since it was pushed, whose
    /// real deadline is later. Those entries move to their real deadline here, at most one
    /// move per person heard per entry, instead of each waking the door for nothing: with
    /// 150 persons present, up to 15 wake-ups a second (one per person every `lostAfter`).
    public mutating func nextTransition() -> Instant? {
        while let top = heap.first {
            let person = Int(top.person)
            guard person >= 0, person < persons.count, persons[person].scheduledAt == top.time else {
                _ = heap.popFirst()  // stale: the person was rescheduled earlier, or needs no timer
                continue
            }
            guard let due = deadline(person: person) else {
                _ = heap.popFirst()
                persons[person].scheduledAt = Self.never
                continue
            }
            if due <= top.time { return Instant(nanoseconds: top.time) }
            _ = heap.popFirst()
            heap.push(.init(time: due, person: top.person))
            persons[person].scheduledAt = due
        }
        return nil
    }

    /// The person index for a matcher tag index, if a person carries that tag.
    func tagSlot(forTagIndex index: Int) -> Int? {
        guard index >= 0, index < slotByTagIndex.count else { return nil }
        let slot = slotByTagIndex[index]
        return slot < 0 ? nil : Int(slot)
    }

    /// Clamps an input's time so that time never goes backwards inside the engine.
    mutating func monotonic(_ instant: Instant) -> Int64 {
        if instant.nanoseconds > latest { latest = instant.nanoseconds }
        return latest
    }
}
