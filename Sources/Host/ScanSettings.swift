import HCI

/// What the configuration says about scanning (`[bluetooth] scan`, `tag_interval_ms`,
/// `--duty`).
public struct ScanSettings: Hashable, Sendable {
    public enum Mode: Hashable, Sendable {
        /// Listen only: the tags' advertising data is all the gateway needs.
        case passive
        /// Also ask for scan responses (tags that put their identity there).
        case active
    }

    public var mode: Mode
    /// The tags' advertising interval in milliseconds.
    public var tagIntervalMs: Int
    /// Fraction of each interval spent listening (0.1–1.0), for Pis whose Wi-Fi shares
    /// the radio; `nil` = the rule's default.
    public var dutyOverride: Double?
    /// Extended family only: also scan the LE Coded PHY (long-range tags), if the
    /// controller has it.
    public var scanCodedPHY: Bool

    public init(mode: Mode = .passive, tagIntervalMs: Int = 700, dutyOverride: Double? = nil, scanCodedPHY: Bool = false) {
        self.mode = mode
        self.tagIntervalMs = tagIntervalMs
        self.dutyOverride = dutyOverride
        self.scanCodedPHY = scanCodedPHY
    }

    var scanType: LEScanType { mode == .active ? .active : .passive }
}
