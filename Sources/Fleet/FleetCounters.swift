/// Counters since the process started (Prometheus expects them to start at zero with
/// it). Each happening costs one increment; nothing here is walked per report.
public struct FleetCounters: Hashable, Sendable {
    /// Every advertising report heard.
    public var reports: UInt64 = 0
    /// Reports that matched a configured tag.
    public var tagReports: UInt64 = 0
    public var checkins: UInt64 = 0
    public var checkouts: UInt64 = 0
    public var spoofSuspected: UInt64 = 0
    public var deliveries = Deliveries()
    public var deliveryLatency = LatencyHistogram()
    public var controllerResets: UInt64 = 0
    /// Resolvable private addresses: AES calls made, and unknown addresses turned away by
    /// the resolution budget (docs/identities.md, "Address floods").
    public var irkTries: UInt64 = 0
    public var resolutionsGated: UInt64 = 0
    public var resolutionsDeferred: UInt64 = 0
    /// Sightings an unknown address needs now before it is tried (1 unless flooded).
    public var resolutionGate: UInt64 = 1
    public var proofsOK: UInt64 = 0
    public var proofsFailed: UInt64 = 0
    public var heartbeatsSent: UInt64 = 0
    public var heartbeatsFailed: UInt64 = 0
    public var rosterFetches = RosterFetchCounts()
    /// 1 while events cannot be stored (disk trouble of any cause: docs/reliability.md).
    public var diskTrouble: UInt64 = 0
    public var corruption = CorruptionCounts()

    /// Databases found corrupt, by whatever path found it, and what became of them
    /// (docs/reliability.md, "Disk trouble").
    public struct CorruptionCounts: Hashable, Sendable {
        /// Examined and found sound after all: kept.
        public var sound: UInt64 = 0
        /// Moved aside, a fresh database started with what could be read.
        public var movedAside: UInt64 = 0
        /// Copied into the fresh databases: undelivered events, presence records.
        public var salvagedEvents: UInt64 = 0
        public var salvagedPresence: UInt64 = 0
        /// Stretches of an events table stepped over (their rows lost, not counted by
        /// number), and damaged files that could not be read at all.
        public var unreadableStretches: UInt64 = 0
        public var unreadableFiles: UInt64 = 0

        public init() {}
    }

    /// Answers to event deliveries, by what became of the event.
    public struct Deliveries: Hashable, Sendable {
        public var stored: UInt64 = 0
        public var duplicate: UInt64 = 0
        public var rejected: UInt64 = 0
        public var dead: UInt64 = 0
        public var retry: UInt64 = 0

        public init() {}
    }

    public init() {}

    public var otherReports: UInt64 { reports >= tagReports ? reports - tagReports : 0 }

    /// Counts an event by its type name (`checkin`, `checkout`, `spoof_suspected`).
    public mutating func countEvent(type: String) {
        switch type {
        case "checkin": checkins &+= 1
        case "checkout": checkouts &+= 1
        case "spoof_suspected": spoofSuspected &+= 1
        default: break
        }
    }

    /// Counts a delivery answer: 201 stored, 200 duplicate.
    public mutating func countDelivered(status: Int) {
        if status == 200 { deliveries.duplicate &+= 1 } else { deliveries.stored &+= 1 }
    }
}

/// Seconds from an event's decision to the server's 201/200, in Prometheus's cumulative
/// buckets. Fixed bounds: a delivery normally takes milliseconds, an outage hours.
public struct LatencyHistogram: Hashable, Sendable {
    public static let bounds: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400]

    /// Per bound, observations at or below it (not yet cumulative).
    public private(set) var counts = [UInt64](repeating: 0, count: LatencyHistogram.bounds.count)
    public private(set) var count: UInt64 = 0
    public private(set) var sum: Double = 0

    public init() {}

    public mutating func observe(seconds: Double) {
        let value = seconds.isFinite ? max(0, seconds) : 0
        count &+= 1
        sum += value
        // Fifteen bounds: a linear scan is as fast as a search, once per delivery.
        if let index = Self.bounds.firstIndex(where: { value <= $0 }) { counts[index] &+= 1 }
    }

    /// Observations at or below each bound, as Prometheus's `le` buckets count them.
    public var cumulative: [UInt64] {
        var running: UInt64 = 0
        return counts.map { running &+= $0; return running }
    }
}
