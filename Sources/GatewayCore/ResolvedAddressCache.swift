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
/// Bounded: when full, the entry inserted longest ago is dropped. Phones rotate their
/// address every ~15 minutes, so old entries are the ones that will not come back.
///
/// The results are a `FlatHashTable` (one cache line per lookup on the matcher's hot
/// path), whose secret seed matters here most: every address in it is one a nearby
/// device chose.
public struct ResolvedAddressCache: Sendable {
    public let capacity: Int
    private var results: FlatHashTable<UInt64>
    /// Insertion order as a ring of addresses; `oldest` is the next victim once full.
    private var order: [UInt64]
    private var oldest = 0
    public private(set) var evictions = 0

    private static let unresolvedMarker: Int32 = -1

    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
        results = FlatHashTable(minimumCapacity: self.capacity)
        order = []
        order.reserveCapacity(self.capacity)
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
        // The oldest goes out before the new one comes in: the table never holds more
        // than `capacity`, the size it was made for.
        if order.count < capacity {
            order.append(address.rawValue)
        } else {
            results.removeValue(forKey: order[oldest])
            order[oldest] = address.rawValue
            oldest = oldest + 1 == capacity ? 0 : oldest + 1
            evictions &+= 1
        }
        results.updateValue(stored, forKey: address.rawValue)
    }

    /// Forgets everything: the IRK set changed, so every earlier answer may be wrong.
    public mutating func removeAll() {
        results.removeAll()
        order.removeAll(keepingCapacity: true)
        oldest = 0
    }
}
