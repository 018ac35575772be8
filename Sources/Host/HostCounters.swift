public struct HostCounters: Hashable, Sendable {
    public var packetsReceived = 0
    public var malformedEvents = 0
    public var unknownEvents = 0
    public var unmatchedCommandCompletes = 0
    public var commandTimeouts = 0
    public var hardwareErrors = 0
    public var recoveries = 0
    public var transportCloses = 0
    public var probesSent = 0
    public var advertisingReports = 0
    public var commandsSent = 0
    public init() {}
}
