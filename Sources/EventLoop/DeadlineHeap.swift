/// A binary min-heap of (time, person) pairs: the presence engine's timer queue, and the
/// forwarder's queues (persons by their oldest pending event's sequence, and by the end of
/// their retry wait).
///
/// Entries are never removed or updated in place. A person's live entry is the one whose
/// time equals their `scheduledAt`; anything else popped is stale and skipped. Samples
/// only push a person's deadline later, so the hot path never touches the heap: the early
/// entry pops, and the person is rescheduled at their true deadline then.
public struct DeadlineHeap: Sendable {
    public struct Entry: Sendable {
        public var time: Int64
        public var person: Int32

        public init(time: Int64, person: Int32) {
            self.time = time
            self.person = person
        }
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    public var count: Int { entries.count }
    public var first: Entry? { entries.first }

    public mutating func removeAll(keepingCapacity: Bool) { entries.removeAll(keepingCapacity: keepingCapacity) }

    public mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].time < entries[parent].time else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    public mutating func popFirst() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return top }
        entries[0] = last
        var parent = 0
        let count = entries.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            var smallest = left
            let right = left + 1
            if right < count, entries[right].time < entries[left].time { smallest = right }
            guard entries[smallest].time < entries[parent].time else { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}
