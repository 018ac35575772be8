import Advertisements
import EventLoop
import HCI

/// Per-advertiser statistics for `scan` (see docs/cli.md): every device heard, not only tags.
///
/// Built for the per-report hot path, whose cost is memory traffic with thousands of
/// advertisers: one integer-keyed lookup, then one 64-byte record per advertiser
/// (`HotEntry`: the counters, the RSSI statistics and up to 32 bytes of advertising data
/// inline, which is all of any legacy advertisement), one RSSI sample and the recency
/// links. The rest of an advertiser (`ColdEntry`: first heard, match keys, the match,
/// scan responses, longer data) is touched only when it changes. Nothing is decoded or
/// allocated per report once an advertiser is known; names, UUID lists and the like are
/// decoded from the kept bytes only when a snapshot is taken for display.
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
    /// Per entry index, in parallel: what every report writes, and what it rarely does.
    private var hot: [HotEntry] = []
    private var cold: [ColdEntry] = []
    /// `rssiWindow` samples per entry, entry `i` at `i * rssiWindow`: one allocation for
    /// all advertisers instead of one each.
    private var rssiSamples: [Int8] = []
    /// The recency list, a doubly linked list over entry indices, kept apart from the
    /// entries: moving an advertiser to the front touches its neighbours' links, and 8
    /// bytes each stay in cache where whole entries would not.
    private var links: [Link] = []
    /// Most and least recently heard entries: the ends of the recency list.
    private var newest: Int32 = -1
    private var oldest: Int32 = -1

    /// The HCI value of an RSSI the controller could not measure.
    public static let rssiUnavailable: Int8 = 127
    /// The longest advertising data kept per advertiser (extended advertising maximum).
    public static let maximumDataLength = 1650

    /// What every report updates: exactly 64 bytes, so one cache line or two.
    struct HotEntry: Sendable {
        var lastHeard: Instant
        var reports = 0
        var rssiCount = 0
        var rssiLast: Int8 = 0
        var rssiMin: Int8 = .max
        var rssiMax: Int8 = .min
        /// The report's own TX power; `rssiUnavailable` until one came.
        var reportTxPower: Int8 = AdvertiserTable.rssiUnavailable
        var connectable = false
        /// Length of the advertising data in `inlineData`, or `HotEntry.dataIsCold` when it
        /// is longer and kept in `ColdEntry.advertisingData` instead.
        var dataLength: UInt8 = 0
        var inlineData = InlineBytes()

        static let dataIsCold: UInt8 = .max

        init(at time: Instant) { lastHeard = time }
    }

    /// 32 bytes of storage inside `HotEntry`.
    struct InlineBytes: Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        static let capacity = 32
    }

    struct ColdEntry: Sendable {
        var key: UInt64
        var firstHeard: Instant
        var keys = AdvertisementKeys()
        /// Advertising data too long for `HotEntry.inlineData`.
        var advertisingData: [UInt8] = []
        var scanResponseData: [UInt8] = []
        var match: TagMatch?
    }

    struct Link: Sendable {
        var newer: Int32 = -1
        var older: Int32 = -1
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
        // Raw bytes throughout: slicing the report's data would retain and release its packet.
        data.withUnsafeBufferPointer { bytes in
            record(address: address, addressType: addressType, rssi: rssi, txPower: txPower, connectable: connectable,
                   isScanResponse: isScanResponse, bytes: bytes, keys: keys, match: match, at: time)
        }
    }

    /// As `record(…data:keys:…)` for bytes read in place (`LEAdvertisingReportView.data`),
    /// copied as needed before returning.
    public mutating func record(
        address: BluetoothAddress, addressType: AddressType, rssi: Int8?, txPower: Int8? = nil,
        connectable: Bool, isScanResponse: Bool = false, bytes: UnsafeBufferPointer<UInt8>,
        keys: AdvertisementKeys, match: TagMatch?, at time: Instant
    ) {
        reports &+= 1
        let index = slot(for: Self.key(address, addressType), at: time)
        let kept = UnsafeBufferPointer(rebasing: bytes.prefix(Self.maximumDataLength))
        // In place through `inout`: copying the entry out and back would cost more than
        // everything else here.
        let dataIsCold = Self.update(
            &hot[index], samples: &rssiSamples, sampleBase: index * rssiWindow, window: rssiWindow,
            rssi: rssi, txPower: txPower, connectable: connectable, isScanResponse: isScanResponse,
            data: kept, at: time
        )
        if isScanResponse {
            Self.overwrite(&cold[index].scanResponseData, with: kept)
        } else if dataIsCold {
            Self.overwrite(&cold[index].advertisingData, with: kept)
        }
        // What matching found stays known even when the device rotates its frames. Only
        // tags and beacons get here, and they are few: their cold entries stay in cache.
        if keys.iBeacon != nil || keys.eddystoneUID != nil || keys.txPowerLevel != nil {
            Self.merge(keys, into: &cold[index].keys)
        }
        if let match, cold[index].match != match { cold[index].match = match }
    }

    /// Updates the statistics and keeps advertising data that fits inline; returns
    /// whether the data is too long for that and goes to the cold entry instead.
    @inline(__always)
    private static func update(
        _ entry: inout HotEntry, samples: inout [Int8], sampleBase: Int, window: Int,
        rssi: Int8?, txPower: Int8?, connectable: Bool, isScanResponse: Bool,
        data: UnsafeBufferPointer<UInt8>, at time: Instant
    ) -> Bool {
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
        guard !isScanResponse else { return false }
        entry.connectable = connectable
        guard data.count <= InlineBytes.capacity else {
            entry.dataLength = HotEntry.dataIsCold
            return true
        }
        withUnsafeMutableBytes(of: &entry.inlineData.words) { storage in
            storage.copyMemory(from: UnsafeRawBufferPointer(data))
        }
        entry.dataLength = UInt8(truncatingIfNeeded: data.count)
        return false
    }

    private static func merge(_ keys: AdvertisementKeys, into kept: inout AdvertisementKeys) {
        if let beacon = keys.iBeacon { kept.iBeacon = beacon }
        if let uid = keys.eddystoneUID {
            kept.eddystoneUID = uid
            kept.eddystoneTxPower = keys.eddystoneTxPower
        }
        if let level = keys.txPowerLevel { kept.txPowerLevel = level }
    }

    /// Replaces the bytes in place: the buffer keeps its capacity, so once an advertiser's
    /// data has been seen once this does not allocate.
    private static func overwrite(_ buffer: inout [UInt8], with bytes: UnsafeBufferPointer<UInt8>) {
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
        if hot.count < capacity {
            index = Int32(hot.count)
            hot.append(HotEntry(at: time))
            cold.append(ColdEntry(key: key, firstHeard: time))
            rssiSamples.append(contentsOf: repeatElement(0, count: rssiWindow))
            links.append(Link())
        } else {
            index = oldest
            unlink(index)
            slots.removeValue(forKey: cold[Int(index)].key)
            evictions &+= 1
            hot[Int(index)] = HotEntry(at: time)
            // Reuse the slot and its data buffers' capacity (swapped out, never copied, so
            // they stay uniquely referenced and emptying them does not reallocate).
            var fresh = ColdEntry(key: key, firstHeard: time)
            swap(&fresh.advertisingData, &cold[Int(index)].advertisingData)
            swap(&fresh.scanResponseData, &cold[Int(index)].scanResponseData)
            fresh.advertisingData.removeAll(keepingCapacity: true)
            fresh.scanResponseData.removeAll(keepingCapacity: true)
            cold[Int(index)] = fresh
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
        let link = links[Int(index)]
        if link.newer >= 0 { links[Int(link.newer)].older = link.older } else { newest = link.older }
        if link.older >= 0 { links[Int(link.older)].newer = link.newer } else { oldest = link.newer }
        links[Int(index)] = Link()
    }

    private mutating func pushFront(_ index: Int32) {
        links[Int(index)] = Link(newer: -1, older: newest)
        if newest >= 0 { links[Int(newest)].newer = index }
        newest = index
        if oldest < 0 { oldest = index }
    }

    // MARK: Snapshots

    /// One advertiser's statistics, or nil if it is not (or no longer) in the table.
    public func advertiser(address: BluetoothAddress, addressType: AddressType, now: Instant) -> AdvertiserSnapshot? {
        guard let index = slots[Self.key(address, addressType)] else { return nil }
        return snapshot(Int(index), now: now, median: rssiMedian(Int(index)))
    }

    /// Every advertiser, strongest (median RSSI) first; ties by address for a stable view.
    public func snapshots(now: Instant) -> [AdvertiserSnapshot] {
        // Sorted as small keys, then built in order: sorting the snapshots themselves
        // would move strings and arrays around thousands of times.
        let order = hot.indices.map { index in
            (median: rssiMedian(index).map(Int.init) ?? Int.min, key: cold[index].key, index: index)
        }.sorted { a, b in
            if a.median != b.median { return a.median > b.median }
            return (a.key & Self.addressMask, a.key >> 48) < (b.key & Self.addressMask, b.key >> 48)
        }
        return order.map { snapshot($0.index, now: now, median: $0.median == Int.min ? nil : Int8(truncatingIfNeeded: $0.median)) }
    }

    private static let addressMask: UInt64 = (1 << 48) - 1

    /// The median of entry `index`'s RSSI window (the lower middle sample when the count
    /// is even), sorted on the stack; nil before any sample.
    private func rssiMedian(_ index: Int) -> Int8? {
        let count = min(hot[index].rssiCount, rssiWindow)
        guard count > 0 else { return nil }
        let base = index * rssiWindow
        return withUnsafeTemporaryAllocation(of: Int8.self, capacity: count) { buffer in
            var window = buffer
            for offset in 0 ..< count { window.initializeElement(at: offset, to: rssiSamples[base + offset]) }
            window.sort()
            return window[(count - 1) / 2]
        }
    }

    /// The advertising data of entry `index`, wherever it is kept.
    private func advertisingData(_ index: Int) -> [UInt8] {
        let entry = hot[index]
        if entry.dataLength == HotEntry.dataIsCold { return cold[index].advertisingData }
        return withUnsafeBytes(of: entry.inlineData.words) { Array($0.prefix(Int(entry.dataLength))) }
    }

    /// - Parameter median: `rssiMedian(index)`, which the caller already has.
    private func snapshot(_ index: Int, now: Instant, median: Int8?) -> AdvertiserSnapshot {
        let entry = hot[index]
        let details = cold[index]
        var rssi: AdvertiserSnapshot.RSSIStatistics?
        if let median {
            rssi = .init(last: Int(entry.rssiLast), median: Int(median), min: Int(entry.rssiMin), max: Int(entry.rssiMax))
        }
        var identity = AdvertisementSummary(parsing: advertisingData(index)).identity
        if !details.scanResponseData.isEmpty {
            identity = identity.merging(AdvertisementSummary(parsing: details.scanResponseData).identity)
        }
        identity.iBeacon = identity.iBeacon ?? details.keys.iBeacon
        identity.eddystoneUID = identity.eddystoneUID ?? details.keys.eddystoneUID

        // The example in docs/cli.md shows an iBeacon's measured power as txPower: when the report
        // and the data carry no TX power, the beacon's calibrated power is the best hint.
        let reportTxPower = entry.reportTxPower == Self.rssiUnavailable ? nil : entry.reportTxPower
        let txPower = reportTxPower ?? details.keys.txPowerLevel ?? details.keys.iBeacon?.measuredPower
            ?? details.keys.eddystoneTxPower

        // Rates over less than a second would be wild guesses, so the span is at least 1 s.
        let span = max((now - details.firstHeard).secondsDouble, 1)
        return AdvertiserSnapshot(
            address: BluetoothAddress(rawValue: details.key),
            addressType: AddressType(rawValue: UInt8(truncatingIfNeeded: details.key >> 48)),
            reports: entry.reports, reportsPerSecond: Double(entry.reports) / span,
            firstHeard: details.firstHeard, lastHeard: entry.lastHeard,
            rssi: rssi, identity: identity, txPower: txPower.map(Int.init), connectable: entry.connectable,
            personId: details.match?.personId, tagId: details.match?.tagId
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
