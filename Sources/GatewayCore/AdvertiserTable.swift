import EventLoop
import HCI

/// Per-advertiser statistics for `scan` (SPEC §12): every device heard, not only tags.
///
/// Built for the per-report hot path: one integer-keyed lookup, a few stores, and a
/// copy of the advertising bytes into a buffer the entry already owns. Nothing is
/// decoded or allocated per report once an advertiser is known; names, UUID lists and
/// the like are decoded from the kept bytes only when a snapshot is taken for display.
///
/// Memory is bounded: at most `capacity` advertisers (the least recently heard one is
/// evicted, and counted, to make room) and `rssiWindow` RSSI samples each.
public struct AdvertiserTable: Sendable {
    public let capacity: Int
    public let rssiWindow: Int
    /// Advertisers dropped to stay within `capacity`.
    public private(set) var evictions = 0
    /// Reports recorded, from every advertiser.
    public private(set) var reports = 0

    private var slots: [UInt64: Int32] = [:]
    private var entries: [Entry] = []
    /// `rssiWindow` samples per entry, entry `i` at `i * rssiWindow`: one allocation for
    /// all advertisers instead of one each.
    private var rssiSamples: [Int8] = []
    /// The recency list, a doubly linked list over entry indices. Kept in two small arrays
    /// apart from the entries: moving an advertiser to the front touches its neighbours'
    /// links, and 8 bytes each stay in cache where whole entries would not.
    private var newerLinks: [Int32] = []
    private var olderLinks: [Int32] = []
    /// Most and least recently heard entries: the ends of the recency list.
    private var newest: Int32 = -1
    private var oldest: Int32 = -1

    /// The HCI value of an RSSI the controller could not measure.
    public static let rssiUnavailable: Int8 = 127
    /// The longest advertising data kept per advertiser (extended advertising maximum).
    public static let maximumDataLength = 1650

    struct Entry: Sendable {
        var key: UInt64
        var firstHeard: Instant
        var lastHeard: Instant
        var reports = 0
        var rssiCount = 0
        var rssiLast: Int8 = 0
        var rssiMin: Int8 = .max
        var rssiMax: Int8 = .min
        var reportTxPower: Int8?
        var connectable = false
        var keys = AdvertisementKeys()
        var advertisingData: [UInt8] = []
        var scanResponseData: [UInt8] = []
        var match: TagMatch?
    }

    public init(capacity: Int = 10_000, rssiWindow: Int = 64) {
        self.capacity = max(1, capacity)
        self.rssiWindow = max(1, rssiWindow)
    }

    public var count: Int { slots.count }

    static func key(_ address: BluetoothAddress, _ type: AddressType) -> UInt64 {
        address.rawValue | UInt64(type.rawValue) << 48
    }

    /// Records one report, decoding the match keys itself.
    public mutating func record(
        address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8? = nil,
        connectable: Bool, isScanResponse: Bool = false, data: ArraySlice<UInt8>,
        match: TagMatch?, at time: Instant
    ) {
        record(address: address, addressType: addressType, rssi: rssi, txPower: txPower, connectable: connectable,
               isScanResponse: isScanResponse, data: data, keys: AdvertisementKeys(scanning: data), match: match, at: time)
    }

    /// Records one report with keys already extracted for matching.
    /// - Parameters:
    ///   - rssi: dBm; nil or 127 (not available) counts the report but adds no sample.
    ///   - txPower: the report's own TX power (extended reports), nil or 127 if absent.
    ///   - isScanResponse: scan responses are kept apart from advertisements so that a
    ///     name sent only in the response stays visible.
    public mutating func record(
        address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8? = nil,
        connectable: Bool, isScanResponse: Bool = false, data: ArraySlice<UInt8>,
        keys: AdvertisementKeys, match: TagMatch?, at time: Instant
    ) {
        reports &+= 1
        let index = slot(for: Self.key(address, addressType), at: time)
        // In place through `inout`: copying the entry out would share its data buffers and
        // make the overwrite below allocate.
        Self.update(&entries[index], samples: &rssiSamples, sampleBase: index * rssiWindow, window: rssiWindow,
                    rssi: rssi, txPower: txPower, connectable: connectable, isScanResponse: isScanResponse,
                    data: data, keys: keys, match: match, at: time)
    }

    @inline(__always)
    private static func update(
        _ entry: inout Entry, samples: inout [Int8], sampleBase: Int, window: Int,
        rssi: Int8?, txPower: Int8?, connectable: Bool, isScanResponse: Bool,
        data: ArraySlice<UInt8>, keys: AdvertisementKeys, match: TagMatch?, at time: Instant
    ) {
        entry.reports &+= 1
        entry.lastHeard = time
        if let rssi, rssi != rssiUnavailable {
            samples[sampleBase + entry.rssiCount % window] = rssi
            entry.rssiCount &+= 1
            entry.rssiLast = rssi
            entry.rssiMin = min(entry.rssiMin, rssi)
            entry.rssiMax = max(entry.rssiMax, rssi)
        }
        if let txPower, txPower != rssiUnavailable { entry.reportTxPower = txPower }
        // Scan responses say nothing about connectability; the advertisement does.
        if !isScanResponse { entry.connectable = connectable }
        // What matching found stays known even when the device rotates its frames.
        if let beacon = keys.iBeacon { entry.keys.iBeacon = beacon }
        if let uid = keys.eddystoneUID {
            entry.keys.eddystoneUID = uid
            entry.keys.eddystoneTxPower = keys.eddystoneTxPower
        }
        if let level = keys.txPowerLevel { entry.keys.txPowerLevel = level }
        if let match { entry.match = match }
        let kept = data.prefix(maximumDataLength)
        if isScanResponse {
            overwrite(&entry.scanResponseData, with: kept)
        } else {
            overwrite(&entry.advertisingData, with: kept)
        }
    }

    /// Replaces the bytes in place: the buffer keeps its capacity, so once an advertiser's
    /// data has been seen once this does not allocate. A plain copy is cheaper than
    /// comparing first.
    @inline(__always)
    private static func overwrite(_ buffer: inout [UInt8], with bytes: ArraySlice<UInt8>) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: bytes)
    }

    /// The entry index for `key`, made the most recently heard; a new entry (evicting the
    /// least recently heard one when full) if the advertiser is new.
    private mutating func slot(for key: UInt64, at time: Instant) -> Int {
        if let existing = slots[key] {
            moveToFront(existing)
            return Int(existing)
        }
        let index: Int32
        if entries.count < capacity {
            index = Int32(entries.count)
            entries.append(Entry(key: key, firstHeard: time, lastHeard: time))
            rssiSamples.append(contentsOf: repeatElement(0, count: rssiWindow))
            newerLinks.append(-1)
            olderLinks.append(-1)
        } else {
            index = oldest
            unlink(index)
            slots.removeValue(forKey: entries[Int(index)].key)
            evictions &+= 1
            // Reuse the slot and its data buffers' capacity (swapped out, never copied, so
            // they stay uniquely referenced and emptying them does not reallocate).
            var fresh = Entry(key: key, firstHeard: time, lastHeard: time)
            swap(&fresh.advertisingData, &entries[Int(index)].advertisingData)
            swap(&fresh.scanResponseData, &entries[Int(index)].scanResponseData)
            fresh.advertisingData.removeAll(keepingCapacity: true)
            fresh.scanResponseData.removeAll(keepingCapacity: true)
            entries[Int(index)] = fresh
        }
        slots[key] = index
        pushFront(index)
        return Int(index)
    }

    private mutating func moveToFront(_ index: Int32) {
        guard index != newest else { return }
        unlink(index)
        pushFront(index)
    }

    private mutating func unlink(_ index: Int32) {
        let newer = newerLinks[Int(index)]
        let older = olderLinks[Int(index)]
        if newer >= 0 { olderLinks[Int(newer)] = older } else { newest = older }
        if older >= 0 { newerLinks[Int(older)] = newer } else { oldest = newer }
        newerLinks[Int(index)] = -1
        olderLinks[Int(index)] = -1
    }

    private mutating func pushFront(_ index: Int32) {
        olderLinks[Int(index)] = newest
        newerLinks[Int(index)] = -1
        if newest >= 0 { newerLinks[Int(newest)] = index }
        newest = index
        if oldest < 0 { oldest = index }
    }

    // MARK: Snapshots

    /// One advertiser's statistics, or nil if it is not (or no longer) in the table.
    public func advertiser(address: BluetoothAddress, addressType: AddressType, now: Instant) -> AdvertiserSnapshot? {
        guard let index = slots[Self.key(address, addressType)] else { return nil }
        return snapshot(Int(index), now: now)
    }

    /// Every advertiser, strongest (median RSSI) first; ties by address for a stable view.
    public func snapshots(now: Instant) -> [AdvertiserSnapshot] {
        entries.indices.map { snapshot($0, now: now) }.sorted(by: AdvertiserSnapshot.strongerFirst)
    }

    private func snapshot(_ index: Int, now: Instant) -> AdvertiserSnapshot {
        let entry = entries[index]
        var rssi: AdvertiserSnapshot.RSSIStatistics?
        if entry.rssiCount > 0 {
            let base = index * rssiWindow
            let window = rssiSamples[base ..< base + min(entry.rssiCount, rssiWindow)].sorted()
            rssi = .init(last: Int(entry.rssiLast), median: Int(window[(window.count - 1) / 2]),
                         min: Int(entry.rssiMin), max: Int(entry.rssiMax))
        }
        var identity = AdvertisementSummary(parsing: entry.advertisingData).identity
            .merging(AdvertisementSummary(parsing: entry.scanResponseData).identity)
        identity.iBeacon = identity.iBeacon ?? entry.keys.iBeacon
        identity.eddystoneUID = identity.eddystoneUID ?? entry.keys.eddystoneUID

        // SPEC §12's example shows an iBeacon's measured power as txPower: when the report
        // and the data carry no TX power, the beacon's calibrated power is the best hint.
        let txPower = entry.reportTxPower ?? entry.keys.txPowerLevel ?? entry.keys.iBeacon?.measuredPower
            ?? entry.keys.eddystoneTxPower

        // Rates over less than a second would be wild guesses, so the span is at least 1 s.
        let span = max((now - entry.firstHeard).secondsDouble, 1)
        return AdvertiserSnapshot(
            address: BluetoothAddress(rawValue: entry.key),
            addressType: AddressType(rawValue: UInt8(truncatingIfNeeded: entry.key >> 48)),
            reports: entry.reports, reportsPerSecond: Double(entry.reports) / span,
            firstHeard: entry.firstHeard, lastHeard: entry.lastHeard,
            rssi: rssi, identity: identity, txPower: txPower.map(Int.init), connectable: entry.connectable,
            personId: entry.match?.personId, tagId: entry.match?.tagId
        )
    }
}

/// What `scan` shows for one advertiser at one moment.
public struct AdvertiserSnapshot: Hashable, Sendable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var reports: Int
    public var reportsPerSecond: Double
    public var firstHeard: Instant
    public var lastHeard: Instant
    /// Nil while no report carried a measured RSSI.
    public var rssi: RSSIStatistics?
    public var identity: AdvertisementIdentity
    public var txPower: Int?
    public var connectable: Bool
    public var personId: String?
    public var tagId: String?

    public struct RSSIStatistics: Hashable, Sendable {
        public var last: Int
        /// Median of the recent window (the lower middle sample when the count is even).
        public var median: Int
        /// Over the whole run, not only the window.
        public var min: Int
        public var max: Int

        public init(last: Int, median: Int, min: Int, max: Int) {
            self.last = last
            self.median = median
            self.min = min
            self.max = max
        }
    }

    public init(address: BluetoothAddress, addressType: AddressType, reports: Int, reportsPerSecond: Double,
                firstHeard: Instant = .zero, lastHeard: Instant = .zero, rssi: RSSIStatistics?,
                identity: AdvertisementIdentity, txPower: Int?, connectable: Bool, personId: String?, tagId: String?) {
        self.address = address
        self.addressType = addressType
        self.reports = reports
        self.reportsPerSecond = reportsPerSecond
        self.firstHeard = firstHeard
        self.lastHeard = lastHeard
        self.rssi = rssi
        self.identity = identity
        self.txPower = txPower
        self.connectable = connectable
        self.personId = personId
        self.tagId = tagId
    }

    static func strongerFirst(_ a: AdvertiserSnapshot, _ b: AdvertiserSnapshot) -> Bool {
        let ra = a.rssi?.median ?? Int.min
        let rb = b.rssi?.median ?? Int.min
        if ra != rb { return ra > rb }
        return (a.address, a.addressType.rawValue) < (b.address, b.addressType.rawValue)
    }
}
