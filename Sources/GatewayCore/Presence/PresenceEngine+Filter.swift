/// The median filter: each tag's samples in a ring inside the engine's flat arrays.
extension PresenceEngine {
    /// Appends a sample to the tag's ring, overwriting the oldest when full.
    mutating func append(slot: Int, time: Int64, rssi: Int8) {
        let base = slot &* capacity
        let count = Int(tags[slot].count)
        let head = Int(tags[slot].head)
        if count < capacity {
            var position = head &+ count
            if position >= capacity { position &-= capacity }
            ringTimes[base &+ position] = time
            ringRSSI[base &+ position] = rssi
            tags[slot].count = Int32(count &+ 1)
        } else {
            ringTimes[base &+ head] = time
            ringRSSI[base &+ head] = rssi
            tags[slot].head = head &+ 1 == capacity ? 0 : Int32(head &+ 1)
        }
        tags[slot].lastSample = time
    }

    /// Drops the samples that are no longer in `(now − window, now]`.
    mutating func expire(slot: Int, now: Int64) {
        let horizon = now &- limits.window
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

    /// The tag's filtered RSSI at `now`, nil when fewer than `minSamples` are in the window.
    mutating func filtered(slot: Int, now: Int64) -> Int? {
        expire(slot: slot, now: now)
        let count = Int(tags[slot].count)
        guard count >= minSamples, count > 0 else { return nil }
        let base = slot &* capacity
        let head = Int(tags[slot].head)
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

    /// The person's signal: the strongest valid filtered RSSI of their tags and that tag.
    mutating func signal(person: Int, now: Int64) -> (rssi: Int, tag: Int32)? {
        var best: (rssi: Int, tag: Int32)?
        // By index: iterating the array itself would retain it on every sample.
        for i in 0 ..< persons[person].tagSlots.count {
            let slot = persons[person].tagSlots[i]
            guard let value = filtered(slot: Int(slot), now: now) else { continue }
            if let current = best, value <= current.rssi { continue }
            best = (value, slot)
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
