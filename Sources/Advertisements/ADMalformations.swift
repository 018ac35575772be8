/// What was wrong with one report's advertising data. A set, not an error, because one
/// report can be wrong in several ways and parsing goes on past most of them: the
/// structures before a bad length are still used.
public struct ADMalformations: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A length octet runs past the end of the data; parsing stopped there.
    public static let lengthPastEnd = ADMalformations(rawValue: 1 << 0)
    /// A structure of a known type has a length its type does not allow
    /// (e.g. a UUID list that is not a whole number of UUIDs, a 3-byte TX power).
    public static let invalidFieldLength = ADMalformations(rawValue: 1 << 1)
    /// Apple manufacturer data announcing an iBeacon (0x02 0x15) with too few bytes.
    public static let truncatedIBeacon = ADMalformations(rawValue: 1 << 2)
    /// An Eddystone frame shorter than its frame type requires.
    public static let truncatedEddystone = ADMalformations(rawValue: 1 << 3)
}

/// Counts of malformed advertising data, for statistics and logs. Never a reason to crash
/// or to stop scanning: a noisy neighbour's firmware bug is not the gateway's problem.
public struct AdvertisingDataCounters: Hashable, Sendable {
    /// Reports with at least one malformation.
    public var malformedReports = 0
    public var lengthPastEnd = 0
    public var invalidFieldLength = 0
    public var truncatedIBeacon = 0
    public var truncatedEddystone = 0

    public init() {}

    public mutating func record(_ malformations: ADMalformations) {
        guard !malformations.isEmpty else { return }
        malformedReports &+= 1
        if malformations.contains(.lengthPastEnd) { lengthPastEnd &+= 1 }
        if malformations.contains(.invalidFieldLength) { invalidFieldLength &+= 1 }
        if malformations.contains(.truncatedIBeacon) { truncatedIBeacon &+= 1 }
        if malformations.contains(.truncatedEddystone) { truncatedEddystone &+= 1 }
    }
}
