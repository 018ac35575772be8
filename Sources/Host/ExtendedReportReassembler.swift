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
        /// The first fragment's fields with the data of every fragment so far: a copy,
        /// since the events the fragments came in are gone when the rest arrives.
        var report: LEAdvertisingReport
        var sequence: UInt64
    }

    /// What to deliver for a report taken.
    public enum Delivery: Hashable, Sendable {
        /// The report as it came: legacy, or whole with nothing of it pending.
        case asItCame
        /// This instead: the advertisement joined from its fragments, or a truncated one
        /// marked so.
        case instead(LEAdvertisingReport)
        /// Nothing now: a fragment held until the rest arrives, or an advertisement dropped.
        case nothing
    }

    public let limits: Limits
    public private(set) var counters = Counters()
    private var pending: [Key: Pending] = [:]
    private var sequence: UInt64 = 0

    public init(limits: Limits = Limits()) { self.limits = limits }

    public var pendingAdvertisers: Int { pending.count }
    public var pendingBytes: Int { pending.values.reduce(0) { $0 + $1.report.data.count } }

    /// Takes one report, read in place; says what to deliver. Complete reports with
    /// nothing pending (the common case) are delivered as they came, and only the data of
    /// fragments that wait for the rest is copied.
    public mutating func accept(_ report: LEAdvertisingReportView) -> Delivery {
        if report.isLegacy { return .asItCame }
        let key = Key(address: report.address, addressType: report.addressType, sid: report.sid ?? 0xFF,
                      scanResponse: report.isScanResponse)
        switch report.dataStatus {
        case .complete:
            guard var entry = pending.removeValue(forKey: key) else { return .asItCame }
            guard append(report.data, to: &entry) else { return .nothing }
            counters.reassembled += 1
            return .instead(merged(entry, last: report, status: .complete))
        case .incompleteMoreToCome:
            if var entry = pending.removeValue(forKey: key) {
                guard append(report.data, to: &entry) else { return .nothing }
                pending[key] = entry
            } else {
                guard report.data.count <= limits.maxBytesPerAdvertiser else {
                    counters.oversizedDropped += 1
                    return .nothing
                }
                if pending.count >= limits.maxPendingAdvertisers { evictOldest() }
                sequence &+= 1
                pending[key] = Pending(report: report.makeReport(), sequence: sequence)
            }
            counters.fragmentsBuffered += 1
            return .nothing
        default:
            // Truncated (or the reserved status 3, treated alike): nothing more will come.
            counters.truncated += 1
            var result: LEAdvertisingReport
            if var entry = pending.removeValue(forKey: key) {
                guard append(report.data, to: &entry) else { return .nothing }
                result = merged(entry, last: report, status: .incompleteTruncated)
            } else {
                guard limits.deliverTruncated else { return .nothing }
                result = report.makeReport()
            }
            result.dataStatus = .incompleteTruncated
            return limits.deliverTruncated ? .instead(result) : .nothing
        }
    }

    /// Forgets every pending fragment (after a controller reset).
    public mutating func reset() {
        pending.removeAll()
    }

    private mutating func append(_ data: UnsafeBufferPointer<UInt8>, to entry: inout Pending) -> Bool {
        guard entry.report.data.count + data.count <= limits.maxBytesPerAdvertiser else {
            counters.oversizedDropped += 1
            return false
        }
        entry.report.data.append(contentsOf: data)
        return true
    }

    /// The first fragment's description with all the data; RSSI from the last fragment,
    /// the most recent reading.
    private func merged(_ entry: Pending, last: LEAdvertisingReportView, status: LEAdvertisingReport.DataStatus) -> LEAdvertisingReport {
        var report = entry.report
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
