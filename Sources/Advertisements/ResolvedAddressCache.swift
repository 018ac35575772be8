import HCI

/// What resolving one resolvable private address against the configured IRKs gave.
public enum AddressResolution: Hashable, Sendable {
    /// Generated with the IRK of the tag at this index of the matcher's tag list.
    case tag(Int)
    /// None of the configured IRKs generated it.
    case unresolved
}

/// Remembers resolution results per address, so each resolvable private address costs
/// its AES calls (one per configured IRK) once, not on every report.
///
/// Bounded, in two parts: addresses that resolved to a tag, and addresses that resolved
/// to nothing, each dropping the entry inserted longest ago when full. Apart, because the
/// second part is what a flood of made-up addresses fills (docs/identities.md, "Address
/// floods"): a tag's address is never pushed out by unknown ones. Phones rotate their
/// address every ~15 minutes, so old entries are the ones that will not come back.
///
/// The results are a `FlatHashTable` (one cache line per lookup on the matcher's hot
/// path), whose secret seed matters here most: every address in it is one a nearby
/// device chose.
public struct ResolvedAddressCache: Sendable {
    /// How many unresolved addresses are kept.
    public let capacity: Int
    /// How many addresses resolved to a tag are kept.
    public let resolvedCapacity: Int
    private var results: FlatHashTable<UInt64>
    private var resolvedOrder: InsertionRing
    private var unresolvedOrder: InsertionRing
    public private(set) var evictions = 0

    private static let unresolvedMarker: Int32 = -1

    public init(capacity: Int = 4096, resolvedCapacity: Int = 1024) {
        self.capacity = max(1, capacity)
        self.resolvedCapacity = max(1, resolvedCapacity)
        results = FlatHashTable(minimumCapacity: self.capacity + self.resolvedCapacity)
        resolvedOrder = InsertionRing(capacity: self.resolvedCapacity)
        unresolvedOrder = InsertionRing(capacity: self.capacity)
    }

    public var count: Int { results.count }

    public func lookup(_ address: BluetoothAddress) -> AddressResolution? {
        guard let stored = results[address.rawValue] else { return nil }
        return stored == Self.unresolvedMarker ? .unresolved : .tag(Int(stored))
    }

    public mutating func insert(_ resolution: AddressResolution, for address: BluetoothAddress) {
        let stored: Int32 = switch resolution {
        // Clamped above the table's empty-slot marker (no tag index comes near it).
        case let .tag(index): max(Int32(clamping: index), FlatHashTable<UInt64>.empty + 1)
        case .unresolved: Self.unresolvedMarker
        }
        if results[address.rawValue] != nil {
            results.updateValue(stored, forKey: address.rawValue)
            return
        }
        // The oldest of its part goes out before the new one comes in: the table never
        // holds more than the two capacities, the size it was made for.
        let evicted = stored == Self.unresolvedMarker
            ? unresolvedOrder.append(address.rawValue) : resolvedOrder.append(address.rawValue)
        if let evicted {
            results.removeValue(forKey: evicted)
            evictions &+= 1
        }
        results.updateValue(stored, forKey: address.rawValue)
    }

    /// The addresses that resolved to a tag, with the tag's index, oldest first among those
    /// still kept (the ones seen most recently, as phones rotate).
    public var resolvedAddresses: [(address: BluetoothAddress, tagIndex: Int)] {
        resolvedOrder.inOrder.compactMap { key in
            guard let stored = results[key], stored != Self.unresolvedMarker else { return nil }
            return (BluetoothAddress(rawValue: key), Int(stored))
        }
    }

    /// Forgets everything: the IRK set changed, so every earlier answer may be wrong.
    public mutating func removeAll() {
        results.removeAll()
        resolvedOrder.removeAll()
        unresolvedOrder.removeAll()
    }
}

/// Keys in insertion order, at most `capacity`: appending to a full ring returns the
/// oldest key, which it replaces.
struct InsertionRing: Sendable {
    let capacity: Int
    private var keys: [UInt64] = []
    private var oldest = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        keys.reserveCapacity(self.capacity)
    }

    mutating func append(_ key: UInt64) -> UInt64? {
        if keys.count < capacity {
            keys.append(key)
            return nil
        }
        let evicted = keys[oldest]
        keys[oldest] = key
        oldest = oldest + 1 == capacity ? 0 : oldest + 1
        return evicted
    }

    /// The keys, oldest first.
    var inOrder: [UInt64] {
        Array(keys[oldest...] + keys[..<oldest])
    }

    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        oldest = 0
    }
}
