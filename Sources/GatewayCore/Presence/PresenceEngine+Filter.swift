/// The median filter: each tag's samples in a ring inside the engine's flat arrays.
///
/// Ring times are Int32 milliseconds after `ringEpoch`. A window is at most a week
/// (6.1 × 10⁸ ms) and Int32 reaches 2.1 × 10⁹ ms, so once offsets pass
/// ``ringRebaseAfterMilliseconds`` (~12 days) the epoch moves up to one window before
/// the newest sample and every stored offset moves with it; offsets too old to
/// represent become `Int32.min`, which every horizon has passed. Sub-millisecond
/// differences are dropped, which moves a window's edge by under a millisecond.
extension PresenceEngine {
    /// How far past `ringEpoch` a sample may be before the epoch is moved up.
    static let ringRebaseAfterMilliseconds: Int64 = 1 << 30

    /// Milliseconds from `ringEpoch` to `time`, rounded down (also for times before it).
    func ringOffset(_ time: Int64) -> Int64 {
        let delta = time &- ringEpoch
        return delta >= 0 ? delta / 1_000_000 : -((999_999 &- delta) / 1_000_000)
    }

    /// The stored time at `index` of the flat ring arrays, in nanoseconds.
    func ringTime(at index: Int) -> Int64 {
        ringEpoch &+ Int64(ringTimes[index]) &* 1_000_000
    }

    /// `time` as a ring entry, moving the epoch first when it is that far behind.
    mutating func ringEntry(_ time: Int64) -> Int32 {
        if ringEpoch == Self.never { ringEpoch = time }
        var offset = ringOffset(time)
        if offset > Self.ringRebaseAfterMilliseconds {
            let shift = ringOffset(time &- limits.window)
            ringEpoch = ringEpoch &+ shift &* 1_000_000
            for index in ringTimes.indices {
                ringTimes[index] = Int32(clamping: Int64(ringTimes[index]) &- shift)
            }
            offset = ringOffset(time)
        }
        return Int32(clamping: offset)
    }

    /// Appends a sample to the tag's ring, overwriting the oldest when full.
    mutating func append(slot: Int, time: Int64, rssi: Int8) {
        let entry = ringEntry(time)
        let base = slot &* capacity
        let count = Int(tags[slot].count)
        let head = Int(tags[slot].head)
        if count < capacity {
            var position = head &+ count
            if position >= capacity { position &-= capacity }
            ringTimes[base &+ position] = entry
            ringRSSI[base &+ position] = rssi
            tags[slot].count = Int32(count &+ 1)
        } else {
            ringTimes[base &+ head] = entry
            ringRSSI[base &+ head] = rssi
            tags[slot].head = head &+ 1 == capacity ? 0 : Int32(head &+ 1)
        }
        tags[slot].lastSample = time
    }

    /// Drops the samples that are no longer in `(now − window, now]`.
    mutating func expire(slot: Int, now: Int64) {
        guard tags[slot].count > 0 else { return }
        let horizon = Int32(clamping: ringOffset(now &- limits.window))
        let base = slot &* capacity
        var head = Int(tags[slot].head)
        var count = Int(tags[slot].count)
        while count > 0, ringTimes[base &+ head] <= horizon {
            head = head &+ 1 == capacity ? 0 : head &+ 1
            count &-= 1
        }
        tags[slot].head = Int32(head)
        tags[slot].count = Int32(count)
    }

    /// The tag's window at `now` (its ring's first index in the flat arrays, the oldest
    /// sample's position, the count), nil when fewer than `minSamples` (or `atLeast`) are in it.
    mutating func filterWindow(slot: Int, now: Int64, atLeast: Int? = nil) -> (base: Int, head: Int, count: Int)? {
        expire(slot: slot, now: now)
        let count = Int(tags[slot].count)
        guard count >= atLeast ?? minSamples, count > 0 else { return nil }
        return (slot &* capacity, Int(tags[slot].head), count)
    }

    /// The tag's filtered RSSI at `now`, nil when fewer than `minSamples` (or `atLeast`)
    /// are in the window.
    mutating func filtered(slot: Int, now: Int64, atLeast: Int? = nil) -> Int? {
        guard let (base, head, count) = filterWindow(slot: slot, now: now, atLeast: atLeast) else { return nil }
        let capacity = capacity
        return ringRSSI.withUnsafeBufferPointer { ring in
            withUnsafeTemporaryAllocation(of: Int8.self, capacity: count) { sorted in
                // Insertion sort: windows hold a handful of samples.
                for i in 0 ..< count {
                    var position = head &+ i
                    if position >= capacity { position &-= capacity }
                    let value = ring[base &+ position]
                    var j = i
                    while j > 0, sorted[j &- 1] > value {
                        sorted[j] = sorted[j &- 1]
                        j &-= 1
                    }
                    sorted[j] = value
                }
                let upper = count / 2
                if count % 2 == 1 { return Int(sorted[upper]) }
                // Mean of the two middles, rounded down (toward the weaker signal).
                let sum = Int(sorted[upper &- 1]) + Int(sorted[upper])
                return sum >> 1
            }
        }
    }

    /// Whether the tag's filtered RSSI at `now` exceeds `threshold`, nil when fewer than
    /// `minSamples` are in the window: `filtered(slot:now:).map { $0 > threshold }`
    /// in one pass over the window, without sorting it (a sample's decision only
    /// compares the signal with one threshold).
    mutating func filtered(slot: Int, now: Int64, exceeds threshold: Int) -> Bool? {
        guard let (base, head, count) = filterWindow(slot: slot, now: now) else { return nil }
        let capacity = capacity
        return ringRSSI.withUnsafeBufferPointer { all in
            Self.median(ofRing: UnsafeBufferPointer(rebasing: all[base ..< base &+ capacity]), head: head, count: count,
                        exceeds: threshold)
        }
    }

    /// Whether the median of the `count` ring entries from `head` (wrapping at the ring's
    /// end) exceeds `threshold`, with the even-count rule of `filtered(slot:now:)`.
    ///
    /// With `above` the number of entries > threshold: for an odd count the middle one
    /// exceeds it iff `above` is more than half. For an even count (half `h`) both
    /// middles exceed it when `above > h`, neither when `above < h`; when `above == h`
    /// the middles are the largest entry ≤ threshold and the smallest > threshold, both
    /// found in the same pass, and their mean rounded down decides.
    static func median(ofRing ring: UnsafeBufferPointer<Int8>, head: Int, count: Int, exceeds threshold: Int) -> Bool {
        var above = 0
        var highestAtOrBelow = Int.min
        var lowestAbove = Int.max
        let capacity = ring.count
        for i in 0 ..< count {
            var position = head &+ i
            if position >= capacity { position &-= capacity }
            let value = Int(ring[position])
            if value > threshold {
                above &+= 1
                if value < lowestAbove { lowestAbove = value }
            } else if value > highestAtOrBelow {
                highestAtOrBelow = value
            }
        }
        let half = count / 2
        if count % 2 == 1 || above != half { return above > half }
        // Here count ≥ 2 and exactly half the entries are above: both extremes were seen.
        return (highestAtOrBelow &+ lowestAbove) >> 1 > threshold
    }

    /// Whether the person's signal (see `signal(person:now:)`) exceeds `threshold`, nil
    /// when no tag has a filtered value. Every tag's window is expired on the way, as
    /// `signal` does, so the rings are left exactly as it would leave them.
    mutating func signal(person: Int, now: Int64, exceeds threshold: Int) -> Bool? {
        var result: Bool?
        for slot in persons[person].tagSlots {
            guard let above = filtered(slot: slot, now: now, exceeds: threshold) else { continue }
            result = above || result == true
        }
        return result
    }

    /// The tag whose signal is the person's (strongest, the first on ties), for a person
    /// with a signal: a single tag is that tag without a look at its window.
    mutating func strongestTag(person: Int, now: Int64) -> Int32 {
        if persons[person].tagCount == 1 { return persons[person].firstTagSlot }
        // Never nil here: the caller has just found a filtered value at `now`.
        return signal(person: person, now: now)?.tag ?? persons[person].decidingTag
    }

    /// The person's signal: the strongest valid filtered RSSI of their tags and that tag.
    mutating func signal(person: Int, now: Int64) -> (rssi: Int, tag: Int32)? {
        var best: (rssi: Int, tag: Int32)?
        for slot in persons[person].tagSlots {
            guard let value = filtered(slot: slot, now: now) else { continue }
            if let current = best, value <= current.rssi { continue }
            best = (value, Int32(slot))
        }
        return best
    }

    /// The tag's samples in the window at `now`, oldest first.
    mutating func series(slot: Int, now: Int64) -> [Int8] {
        guard slot >= 0, slot < tags.count else { return [] }
        expire(slot: slot, now: now)
        let count = Int(tags[slot].count)
        let base = slot &* capacity
        let head = Int(tags[slot].head)
        var values: [Int8] = []
        values.reserveCapacity(count)
        for i in 0 ..< count {
            var position = head &+ i
            if position >= capacity { position &-= capacity }
            values.append(ringRSSI[base &+ position])
        }
        return values
    }
}
