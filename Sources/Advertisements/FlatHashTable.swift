/// A key of a `FlatHashTable`: plain integers, hashed by the key itself.
protocol FlatHashKey: Equatable, Sendable {
    /// The key's 64-bit hash under the table's secret `seed` (see `FlatHash.mix`).
    func hash(seed: UInt64) -> UInt64
    /// Any key: fills the key of empty slots, where it is never compared.
    static var filler: Self { get }
}

/// A map from small integer keys to `Int32`, for the matcher's hot path.
///
/// Why not `Dictionary`: between two batches of reports the tables go cold, so each
/// lookup's cost is its cache misses. A native Dictionary keeps occupancy bits, keys and
/// values in three regions (up to three misses for a hit) and hashes with SipHash. Here a
/// key and its value sit side by side in one array of entries, probed linearly at a load
/// of at most one half, so a lookup usually touches one cache line, and the hash is a few
/// multiplies.
///
/// The hash is seeded with a secret drawn per table: the resolution cache inserts
/// addresses an attacker chooses, and with a known hash they could pick addresses that all
/// land in one run of slots and make every probe long.
///
/// Removal shifts the entries after the hole back (no tombstones), so probe lengths stay
/// those of the live entries however many are removed. A value type (copy on write).
struct FlatHashTable<Key: FlatHashKey>: Sendable {
    struct Entry: Sendable {
        var key: Key
        /// `FlatHashTable.empty` in an empty slot.
        var value: Int32
    }

    /// The value no entry may hold: it marks empty slots, so that a slot is one entry
    /// without a separate occupancy flag.
    static var empty: Int32 { .min }

    /// A power of two long, at most half full, so a probe always reaches an empty slot.
    private var entries: [Entry]
    private(set) var count = 0
    let seed: UInt64

    init(minimumCapacity: Int = 0) {
        var generator = SystemRandomNumberGenerator()
        seed = generator.next()
        entries = Self.emptyEntries(Self.slotCount(for: minimumCapacity))
    }

    var isEmpty: Bool { count == 0 }

    /// Entries the table holds without growing.
    var capacity: Int { entries.count / 2 }

    subscript(key: Key) -> Int32? {
        guard count > 0 else { return nil }
        // Through the buffer: no bounds checks, and nothing retained per probe.
        return entries.withUnsafeBufferPointer { slots in
            let mask = slots.count &- 1
            var index = Int(truncatingIfNeeded: key.hash(seed: seed)) & mask
            while true {
                let value = slots[index].value
                if value == Self.empty { return nil }
                if slots[index].key == key { return value }
                index = (index &+ 1) & mask
            }
        }
    }

    /// Stores `value` for `key`; the value it replaced, nil if the key was new.
    @discardableResult
    mutating func updateValue(_ value: Int32, forKey key: Key) -> Int32? {
        precondition(value != Self.empty, "FlatHashTable cannot store its empty-slot marker")
        var index = slot(for: key)
        if entries[index].value != Self.empty {
            let old = entries[index].value
            entries[index].value = value
            return old
        }
        if (count + 1) * 2 > entries.count {
            rehash(slots: entries.count * 2)
            index = slot(for: key)
        }
        entries[index] = Entry(key: key, value: value)
        count += 1
        return nil
    }

    /// Removes `key`; its value, nil if it was absent.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Int32? {
        guard count > 0 else { return nil }
        var hole = slot(for: key)
        let removed = entries[hole].value
        guard removed != Self.empty else { return nil }
        // Backward shift: each following entry of the run moves into the hole unless its
        // home slot lies after the hole (cyclically), where a probe for it starts past the
        // hole anyway. The run ends at the first empty slot.
        let mask = entries.count - 1
        var next = (hole + 1) & mask
        while entries[next].value != Self.empty {
            let home = self.home(of: entries[next].key, mask: mask)
            // How far the entry is from its home, against how far from the hole.
            if (next - home) & mask >= (next - hole) & mask {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = Entry(key: .filler, value: Self.empty)
        count -= 1
        return removed
    }

    /// Empties the table, keeping its capacity and seed.
    mutating func removeAll() {
        guard count > 0 else { return }
        entries = Self.emptyEntries(entries.count)
        count = 0
    }

    /// The slot holding `key`, or the empty slot where it would go.
    private func slot(for key: Key) -> Int {
        let mask = entries.count - 1
        var index = home(of: key, mask: mask)
        while entries[index].value != Self.empty, entries[index].key != key {
            index = (index + 1) & mask
        }
        return index
    }

    private func home(of key: Key, mask: Int) -> Int {
        Int(truncatingIfNeeded: key.hash(seed: seed)) & mask
    }

    private mutating func rehash(slots: Int) {
        let old = entries
        entries = Self.emptyEntries(slots)
        count = 0
        for entry in old where entry.value != Self.empty {
            entries[slot(for: entry.key)] = entry
            count += 1
        }
    }

    /// The smallest power of two that holds `minimumCapacity` entries at half load (8 at
    /// least, so a tiny table still has room to probe).
    private static func slotCount(for minimumCapacity: Int) -> Int {
        var slots = 8
        while slots / 2 < minimumCapacity { slots *= 2 }
        return slots
    }

    private static func emptyEntries(_ slots: Int) -> [Entry] {
        Array(repeating: Entry(key: .filler, value: empty), count: slots)
    }
}

enum FlatHash {
    /// MurmurHash3's 64-bit finaliser: every input bit flips about half the output bits,
    /// in two multiplies, so the low bits that pick a slot depend on the whole word.
    @inline(__always)
    static func mix(_ word: UInt64) -> UInt64 {
        var h = word
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}

extension UInt64: FlatHashKey {
    @inline(__always)
    func hash(seed: UInt64) -> UInt64 { FlatHash.mix(self ^ seed) }
    static var filler: UInt64 { 0 }
}

extension IBeaconKey: FlatHashKey {
    /// One mix per word, each fed the previous: two keys differing in any field differ
    /// before the last mix, which is a bijection.
    @inline(__always)
    func hash(seed: UInt64) -> UInt64 {
        FlatHash.mix(FlatHash.mix(FlatHash.mix(uuid.high ^ seed) ^ uuid.low) ^ UInt64(majorMinor))
    }

    static var filler: IBeaconKey { IBeaconKey(uuid: UUID128(high: 0, low: 0), major: 0, minor: 0) }
}

extension EddystoneUID: FlatHashKey {
    /// The 2 high namespace bytes and the 6 instance bytes share one word.
    @inline(__always)
    func hash(seed: UInt64) -> UInt64 {
        FlatHash.mix(FlatHash.mix(namespaceLow ^ seed) ^ (UInt64(namespaceHigh) << 48 | instance))
    }

    static var filler: EddystoneUID { EddystoneUID(namespaceHigh: 0, namespaceLow: 0, instance: 0) }
}
