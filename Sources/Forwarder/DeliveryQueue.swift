import EventLoop

/// Which events the forwarder sends next (docs/event-api.md): each person's head — their
/// oldest pending event, the only one of theirs that may be sent (per-person order) — in
/// sequence order, leaving out persons whose head is in flight or waits for its retry.
///
/// Kept in memory and moved by what the forwarder sees happen: events committed since it
/// last looked, the outcomes it recorded, retry waits ending. So choosing the next `k`
/// events costs O(k log n) however long the backlog behind persons held in retry; the
/// store's pending rows are read in full only at start and after another process wrote.
///
/// Retry waits are on the monotonic clock and kept here, not in the store: a wall-clock
/// time written to disk would hold every retry back by however far the clock is stepped
/// back (a Pi without a real-time clock before NTP). What is lost on restart is only the
/// wait: after a start every pending event is due at once, and the backoff starts again.
struct DeliveryQueue {
    private struct Person {
        let id: String
        /// The oldest pending event's sequence; nil when none is known to be pending.
        var head: Int64?
        /// The head as pushed onto `ready`: an entry of `ready` is live only while it
        /// equals this (entries are never removed in place).
        var offered: Int64?
        var inFlight = false
        /// The retry wait, when the head is held back.
        var heldUntil: Instant?

        var isWaiting: Bool { inFlight || heldUntil != nil }
    }

    private var persons: [Person] = []
    private var indexes: [String: Int32] = [:]
    /// Persons who became idle (nothing pending, in flight or held) since the last
    /// compaction: once they outnumber the rest, they are dropped (`compact`), so memory
    /// follows the persons with something to send, not every id ever seen.
    private var idleSinceCompaction = 0
    static let compactionFloor = 1024

    /// Persons known (for the tests: bounded by those with work, plus the floor).
    var personCount: Int { persons.count }
    /// Persons whose head may be sent, by the head's sequence.
    private var ready = DeadlineHeap()
    /// Persons held back, by the end of their wait (monotonic nanoseconds).
    private var holds = DeadlineHeap()
    /// The newest pending sequence seen: later ones are what `sawPending` has not had yet.
    private(set) var newestSequence: Int64 = 0

    /// Forgets every head, to read the pending events again from the first (at start, and
    /// after another process changed the outbox). Requests in flight and retry waits stay.
    mutating func forgetHeads() {
        for index in persons.indices {
            persons[index].head = nil
            persons[index].offered = nil
        }
        ready.removeAll(keepingCapacity: true)
        newestSequence = 0
    }

    /// A pending event committed since the queue last looked (in sequence order).
    mutating func sawPending(sequence: Int64, personId: String) {
        newestSequence = max(newestSequence, sequence)
        let index = self.index(of: personId)
        guard persons[index].head == nil else { return }
        persons[index].head = sequence
        offer(index)
    }

    /// Up to `limit` persons whose head may be sent now, oldest head first. Each is in
    /// flight from then on, until `ended`, `finished` or `retry`.
    mutating func take(limit: Int) -> [(personId: String, sequence: Int64)] {
        var taken: [(personId: String, sequence: Int64)] = []
        while taken.count < limit, let entry = ready.popFirst() {
            let index = Int(entry.person)
            guard persons[index].offered == entry.time else { continue }
            persons[index].offered = nil
            persons[index].inFlight = true
            taken.append((persons[index].id, entry.time))
        }
        return taken
    }

    /// `personId`'s request ended without a retry wait and without a recorded outcome:
    /// their head is still pending (the store could not record it).
    mutating func ended(personId: String) {
        let index = self.index(of: personId)
        persons[index].inFlight = false
        offer(index)
    }

    /// `personId`'s head left the pending state (its outcome is recorded): `nextHead` is
    /// their oldest pending event now, as the store says.
    mutating func finished(personId: String, nextHead: Int64?) {
        let index = self.index(of: personId)
        persons[index].inFlight = false
        persons[index].head = nextHead
        offer(index)
        if nextHead == nil, persons[index].heldUntil == nil {
            idleSinceCompaction += 1
            if idleSinceCompaction > max(Self.compactionFloor, persons.count / 2) { compact() }
        }
    }

    /// Drops idle persons and renumbers the rest; the heaps are rebuilt from what each
    /// person holds (stale entries go with them). O(persons), once per that many idle ones.
    private mutating func compact() {
        let kept = persons.filter { $0.head != nil || $0.isWaiting }
        persons = kept
        indexes = [:]
        indexes.reserveCapacity(kept.count)
        ready.removeAll(keepingCapacity: true)
        holds.removeAll(keepingCapacity: true)
        for (index, person) in kept.enumerated() {
            indexes[person.id] = Int32(index)
            if let offered = person.offered { ready.push(.init(time: offered, person: Int32(index))) }
            if let until = person.heldUntil { holds.push(.init(time: until.nanoseconds, person: Int32(index))) }
        }
        idleSinceCompaction = 0
    }

    /// `personId`'s request ended and their head is to be tried again at `at`.
    mutating func retry(personId: String, at: Instant) {
        let index = self.index(of: personId)
        persons[index].inFlight = false
        persons[index].heldUntil = at
        holds.push(.init(time: at.nanoseconds, person: Int32(index)))
    }

    /// Ends the retry waits that are over at `now`.
    mutating func releaseHolds(at now: Instant) {
        while let entry = holds.first, entry.time <= now.nanoseconds {
            _ = holds.popFirst()
            let index = Int(entry.person)
            guard persons[index].heldUntil?.nanoseconds == entry.time else { continue }
            persons[index].heldUntil = nil
            offer(index)
        }
    }

    /// The operator changed something (token, URL, CA): every wait ends now.
    mutating func releaseAllHolds() {
        while let entry = holds.popFirst() {
            let index = Int(entry.person)
            guard persons[index].heldUntil != nil else { continue }
            persons[index].heldUntil = nil
            offer(index)
        }
    }

    /// When the earliest retry wait ends.
    var nextHoldEnd: Instant? { holds.first.map { Instant(nanoseconds: $0.time) } }

    private mutating func offer(_ index: Int) {
        guard !persons[index].isWaiting, let head = persons[index].head, persons[index].offered != head else { return }
        persons[index].offered = head
        ready.push(.init(time: head, person: Int32(index)))
    }

    private mutating func index(of personId: String) -> Int {
        if let index = indexes[personId] { return Int(index) }
        persons.append(Person(id: personId))
        indexes[personId] = Int32(persons.count - 1)
        return persons.count - 1
    }
}
