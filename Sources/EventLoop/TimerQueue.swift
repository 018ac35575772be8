/// A binary min-heap of timer deadlines, ordered by deadline and then by the order
/// the timers were scheduled, so timers due at the same instant fire first-come first-served.
///
/// Cancelling only forgets the callback (O(1)); the stale heap entry is skipped when it
/// surfaces. To keep memory bounded when a timer is re-armed far more often than it fires
/// (a debounce pushed back on every advertisement), the heap is rebuilt once stale entries
/// outnumber live ones.
struct TimerQueue {
    struct Entry {
        var deadline: Instant
        var id: UInt64
    }

    private var heap: [Entry] = []
    private var callbacks: [UInt64: () -> Void] = [:]

    var isEmpty: Bool { callbacks.isEmpty }
    var count: Int { callbacks.count }
    /// Entries in the heap including cancelled ones; exposed for tests of the bound.
    var storedEntryCount: Int { heap.count }

    mutating func insert(id: UInt64, deadline: Instant, callback: @escaping () -> Void) {
        callbacks[id] = callback
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
    }

    @discardableResult
    mutating func cancel(id: UInt64) -> Bool {
        guard callbacks.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64 && heap.count > 2 * callbacks.count { compact() }
        return true
    }

    func contains(id: UInt64) -> Bool { callbacks[id] != nil }

    /// The earliest deadline of a timer that is still armed.
    mutating func nextDeadline() -> Instant? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the earliest timer if it is due at `now`.
    mutating func popDue(now: Instant) -> (() -> Void)? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        removeTop()
        return callbacks.removeValue(forKey: top.id)
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, callbacks[top.id] == nil { removeTop() }
    }

    private mutating func compact() {
        heap.removeAll { callbacks[$0.id] == nil }
        // Floyd's heap construction: sift down every internal node, last first.
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private static func ordered(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.ordered(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && Self.ordered(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && Self.ordered(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
