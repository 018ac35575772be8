import HCI

/// Joins extended advertising reports that the controller split into fragments
/// ("incomplete, more to come") back into one report per advertisement.
///
/// Fragments are keyed by advertiser (address, address type, SID) and by whether they
/// are a scan response. Memory is bounded twice: per advertiser (`maxBytesPerAdvertiser`,
/// the 1650 bytes an extended advertisement can hold) and in the number of advertisers
/// with fragments pending (`maxPendingAdvertisers`, oldest evicted). Each bound that
/// bites is counted.
public struct ExtendedReportReassembler: Sendable {
    public struct Limits: Hashable, Sendable {
        public var maxBytesPerAdvertiser: Int
        public var maxPendingAdvertisers: Int
        /// Deliver what arrived of a truncated advertisement (marked truncated), or drop it.
        public var deliverTruncated: Bool

        public init(maxBytesPerAdvertiser: Int = 1650, maxPendingAdvertisers: Int = 64, deliverTruncated: Bool = true) {
            self.maxBytesPerAdvertiser = maxBytesPerAdvertiser
            self.maxPendingAdvertisers = maxPendingAdvertisers
            self.deliverTruncated = deliverTruncated
        }
    }

    public struct Counters: Hashable, Sendable {
        /// Fragments held back waiting for the rest.
        public var fragmentsBuffered = 0
        /// Advertisements delivered whole after being joined.
        public var reassembled = 0
        /// Truncated advertisements delivered (marked) or dropped, per `deliverTruncated`.
        public var truncated = 0
        /// Advertisements dropped for exceeding `maxBytesPerAdvertiser`.
        public var oversizedDropped = 0
        /// Pending advertisements evicted to respect `maxPendingAdvertisers`.
        public var evicted = 0
        public init() {}
    }

    private struct Key: Hashable {
        var address: BluetoothAddress
        var addressType: AddressType
        var sid: UInt8
        var scanResponse: Bool
    }

    private struct Pending {
        var first: LEAdvertisingReport
        var data: [UInt8]
        var sequence: UInt64
    }

    public let limits: Limits
    public private(set) var counters = Counters()
    private var pending: [Key: Pending] = [:]
    private var sequence: UInt64 = 0

    public init(limits: Limits = Limits()) { self.limits = limits }

    public var pendingAdvertisers: Int { pending.count }
    public var pendingBytes: Int { pending.values.reduce(0) { $0 + $1.data.count } }

    /// Takes one report; returns the report to deliver, if any. Complete reports with
    /// nothing pending (the common case) pass through without a copy.
    public mutating func accept(_ report: LEAdvertisingReport) -> LEAdvertisingReport? {
        if report.isLegacy { return report }
        let key = Key(address: report.address, addressType: report.addressType, sid: report.sid ?? 0xFF,
                      scanResponse: report.isScanResponse)
        switch report.dataStatus {
        case .complete:
            guard var entry = pending.removeValue(forKey: key) else { return report }
            guard append(report.data, to: &entry) else { return nil }
            counters.reassembled += 1
            return merged(entry, last: report, status: .complete)
        case .incompleteMoreToCome:
            if var entry = pending.removeValue(forKey: key) {
                guard append(report.data, to: &entry) else { return nil }
                pending[key] = entry
            } else {
                guard report.data.count <= limits.maxBytesPerAdvertiser else {
                    counters.oversizedDropped += 1
                    return nil
                }
                if pending.count >= limits.maxPendingAdvertisers { evictOldest() }
                sequence &+= 1
                pending[key] = Pending(first: report, data: Array(report.data), sequence: sequence)
            }
            counters.fragmentsBuffered += 1
            return nil
        default:
            // Truncated (or the reserved status 3, treated alike): nothing more will come.
            counters.truncated += 1
            var result = report
            if var entry = pending.removeValue(forKey: key) {
                guard append(report.data, to: &entry) else { return nil }
                result = merged(entry, last: report, status: .incompleteTruncated)
            }
            result.dataStatus = .incompleteTruncated
            return limits.deliverTruncated ? result : nil
        }
    }

    /// Forgets every pending fragment (after a controller reset).
    public mutating func reset() {
        pending.removeAll()
    }

    private mutating func append(_ data: ArraySlice<UInt8>, to entry: inout Pending) -> Bool {
        guard entry.data.count + data.count <= limits.maxBytesPerAdvertiser else {
            counters.oversizedDropped += 1
            return false
        }
        entry.data.append(contentsOf: data)
        return true
    }

    /// The first fragment's description with all the data; RSSI from the last fragment,
    /// the most recent reading.
    private func merged(_ entry: Pending, last: LEAdvertisingReport, status: LEAdvertisingReport.DataStatus) -> LEAdvertisingReport {
        var report = entry.first
        report.data = entry.data[...]
        report.dataStatus = status
        report.rssi = last.rssi ?? report.rssi
        return report
    }

    private mutating func evictOldest() {
        guard let oldest = pending.min(by: { $0.value.sequence < $1.value.sequence })?.key else { return }
        pending.removeValue(forKey: oldest)
        counters.evicted += 1
    }
}
