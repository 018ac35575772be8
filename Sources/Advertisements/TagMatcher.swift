import EventLoop
import HCI

/// One configured tag: who carries it and how it is recognised (see docs/identities.md, docs/configuration.md).
public struct ConfiguredTag: Hashable, Sendable {
    public var tagId: String
    public var personId: String
    public var identities: [TagIdentity]

    public init(tagId: String, personId: String, identities: [TagIdentity]) {
        self.tagId = tagId
        self.personId = personId
        self.identities = identities
    }
}

/// A report recognised as coming from a configured tag.
public struct TagMatch: Hashable, Sendable {
    /// Index into the matcher's `tags`: the cheap key for per-tag state downstream.
    public var tagIndex: Int
    public var tagId: String
    public var personId: String
    /// Which of the tag's identities recognised the report.
    public var matchedBy: MatchedIdentity

    public enum MatchedIdentity: Hashable, Sendable {
        case address, iBeacon, eddystoneUID, irk
    }
}

/// Recognises configured tags in advertising reports.
///
/// Everything is keyed by integers (address, packed iBeacon and Eddystone ids) so that
/// the reports that come from other devices (most of them at a busy door) are rejected with a few hash
/// lookups, without allocating. The tables are `FlatHashTable`s: at a busy door they are
/// cold between two batches of reports, and a flat table costs one cache line per
/// lookup where a `Dictionary` costs up to three. Only resolvable private addresses that
/// no earlier rule matched cost AES, and only once per address thanks to
/// `ResolvedAddressCache`.
public struct TagMatcher: Sendable {
    public private(set) var tags: [ConfiguredTag]
    private var byAddress = FlatHashTable<UInt64>()
    private var byIBeacon = FlatHashTable<IBeaconKey>()
    private var byEddystoneUID = FlatHashTable<EddystoneUID>()
    private var irks: [IRKEntry] = []
    private var cache: ResolvedAddressCache
    /// What unknown addresses may cost (nil: no bound, for tools that look for one tag).
    public private(set) var resolutionBudget: RPAResolutionBudget?
    private var sightings = AddressSightings()
    public private(set) var counters = Counters()
    /// Identities listed under more than one tag; the first tag keeps them.
    public private(set) var conflicts: [Conflict] = []

    struct IRKEntry: Hashable, Sendable {
        var key: IdentityResolvingKey
        var tagIndex: Int32
    }

    public struct Counters: Hashable, Sendable {
        public var reports = 0
        public var matched = 0
        /// RPA look-ups answered from the cache, and those that needed AES.
        public var resolutionCacheHits = 0
        public var resolutionCacheMisses = 0
        /// AES calls made to resolve addresses (one per IRK tried).
        public var irkTries = 0
        /// Unknown addresses not tried at a report: heard fewer times than the gate asks
        /// (`gated`) or with the budget spent (`deferred`). Either is tried again at its
        /// next report (docs/identities.md, "Address floods").
        public var resolutionsGated = 0
        public var resolutionsDeferred = 0
        public var malformed = AdvertisingDataCounters()
    }

    public struct Conflict: Hashable, Sendable {
        public var identity: TagIdentity
        public var keptTagId: String
        public var ignoredTagId: String
    }

    public init(tags: [(tagId: String, personId: String, identities: [TagIdentity])], resolutionCacheCapacity: Int = 4096) {
        self.init(tags: tags.map { ConfiguredTag(tagId: $0.tagId, personId: $0.personId, identities: $0.identities) },
                  resolutionCacheCapacity: resolutionCacheCapacity)
    }

    public init(tags: [ConfiguredTag], resolutionCacheCapacity: Int = 4096, resolutionBudget: RPAResolutionBudget? = nil) {
        self.tags = []
        cache = ResolvedAddressCache(capacity: resolutionCacheCapacity)
        self.resolutionBudget = resolutionBudget
        reconfigure(tags: tags)
    }

    /// Time passed: the resolution budget refills (at each batch of reports).
    public mutating func refillResolutionBudget(at now: Instant) {
        resolutionBudget?.refill(at: now)
    }

    /// Replaces the configured tags (configuration reload). Cached RPA resolutions are
    /// dropped when the IRKs or the tags they belong to changed, and kept otherwise.
    public mutating func reconfigure(tags newTags: [ConfiguredTag]) {
        let previousIRKs = irks
        tags = newTags
        irks = []
        conflicts = []
        // Sized for a tag of one identity each at once: a server roster's thousands of
        // tags would otherwise rehash these tables a dozen times as they grow.
        var owners: [TagIdentity: Int] = [:]
        owners.reserveCapacity(newTags.count)
        byAddress = FlatHashTable(minimumCapacity: newTags.count)
        byIBeacon = FlatHashTable(minimumCapacity: newTags.count)
        byEddystoneUID = FlatHashTable()
        for (index, tag) in newTags.enumerated() {
            let index32 = Int32(clamping: index)
            for identity in tag.identities {
                if let owner = owners[identity] {
                    if owner != index {
                        conflicts.append(Conflict(identity: identity, keptTagId: newTags[owner].tagId, ignoredTagId: tag.tagId))
                    }
                    continue
                }
                owners[identity] = index
                switch identity {
                case let .address(address):
                    byAddress.updateValue(index32, forKey: address.rawValue)
                case let .iBeacon(uuid, major, minor):
                    guard let uuid = UUID128(bigEndianBytes: uuid) else { continue }
                    byIBeacon.updateValue(index32, forKey: IBeaconKey(uuid: uuid, major: major, minor: minor))
                case let .eddystoneUID(namespace, instance):
                    guard let uid = EddystoneUID(namespace: namespace, instance: instance) else { continue }
                    byEddystoneUID.updateValue(index32, forKey: uid)
                case let .irk(bytes):
                    guard let key = IdentityResolvingKey(bytes) else { continue }
                    irks.append(IRKEntry(key: key, tagIndex: index32))
                }
            }
        }
        if irks != previousIRKs {
            cache.removeAll()
            sightings.removeAll()
        }
    }

    /// Decodes just enough of `data` to match, counting malformed data.
    public mutating func match(address: BluetoothAddress, addressType: AddressType, data: ArraySlice<UInt8>) -> TagMatch? {
        match(address: address, addressType: addressType, keys: AdvertisementKeys(scanning: data))
    }

    public mutating func match(address: BluetoothAddress, addressType: AddressType, data: [UInt8]) -> TagMatch? {
        match(address: address, addressType: addressType, data: data[...])
    }

    /// Matches with keys the caller already extracted (e.g. because `scan` also keeps
    /// statistics from them). Order: address, iBeacon, Eddystone-UID, IRK.
    public mutating func match(address: BluetoothAddress, addressType: AddressType, keys: AdvertisementKeys) -> TagMatch? {
        guard let (index, kind) = matchIndex(address: address, addressType: addressType, keys: keys) else { return nil }
        let tag = tags[Int(index)]
        return TagMatch(tagIndex: Int(index), tagId: tag.tagId, personId: tag.personId, matchedBy: kind)
    }

    /// `match` without the tag: the hot path's form. It leaves `tags[tagIndex]` (another
    /// cold cache line, and a retain of its strings) to callers that need more than the
    /// index. Counts like `match`.
    public mutating func matchIndex(address: BluetoothAddress, addressType: AddressType,
                                    keys: AdvertisementKeys) -> (tagIndex: Int32, matchedBy: TagMatch.MatchedIdentity)? {
        counters.reports &+= 1
        counters.malformed.record(keys.malformations)
        guard let found = lookup(address: address, addressType: addressType, keys: keys) else { return nil }
        counters.matched &+= 1
        return found
    }

    private mutating func lookup(address: BluetoothAddress, addressType: AddressType, keys: AdvertisementKeys) -> (Int32, TagMatch.MatchedIdentity)? {
        if !byAddress.isEmpty, Self.hasStableAddress(address, addressType), let index = byAddress[address.rawValue] {
            return (index, .address)
        }
        if let beacon = keys.iBeacon, let index = byIBeacon[beacon.key] {
            return (index, .iBeacon)
        }
        if let uid = keys.eddystoneUID, let index = byEddystoneUID[uid] {
            return (index, .eddystoneUID)
        }
        if !irks.isEmpty, address.isResolvablePrivate(type: addressType), let index = resolve(address) {
            return (index, .irk)
        }
        return nil
    }

    /// Public and static random addresses identify a device; private ones rotate and
    /// would only match by accident.
    static func hasStableAddress(_ address: BluetoothAddress, _ type: AddressType) -> Bool {
        switch type {
        case .publicDevice, .publicIdentity, .randomIdentity: true
        case .randomDevice: address.randomAddressKind == .staticRandom
        default: false
        }
    }

    private mutating func resolve(_ address: BluetoothAddress) -> Int32? {
        if let cached = cache.lookup(address) {
            counters.resolutionCacheHits &+= 1
            if case let .tag(index) = cached { return Int32(index) }
            return nil
        }
        counters.resolutionCacheMisses &+= 1
        if resolutionBudget != nil {
            // Bounded work (`RPAResolutionBudget`): an address the gate or the budget turns
            // away is not cached, so its next report asks again.
            if resolutionBudget!.gate > 1, sightings.heard(address) < resolutionBudget!.gate {
                counters.resolutionsGated &+= 1
                return nil
            }
            guard resolutionBudget!.take(irks.count) else {
                counters.resolutionsDeferred &+= 1
                if resolutionBudget!.gate == 1 { _ = sightings.heard(address) }
                return nil
            }
        }
        // By index: a copy of each entry would retain its key's cipher (and release it).
        for index in irks.indices where irks[index].key.resolves(address) {
            counters.irkTries &+= index + 1
            resolutionBudget?.refund(irks.count - index - 1)
            let tagIndex = irks[index].tagIndex
            cache.insert(.tag(Int(tagIndex)), for: address)
            return tagIndex
        }
        counters.irkTries &+= irks.count
        cache.insert(.unresolved, for: address)
        return nil
    }

    /// Resolvable private addresses recently resolved to a tag, with the person carrying it
    /// (at most the cache's resolved capacity): what an enrolled phone's IRK must not
    /// resolve (docs/security.md).
    public var recentlyResolvedAddresses: [(address: BluetoothAddress, personId: String)] {
        cache.resolvedAddresses.compactMap { entry in
            entry.tagIndex < tags.count ? (entry.address, tags[entry.tagIndex].personId) : nil
        }
    }

    /// Resolution results currently cached (bounded by the cache's capacity).
    public var cachedResolutions: Int { cache.count }
}
