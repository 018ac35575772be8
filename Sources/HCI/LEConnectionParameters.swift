/// Connection parameters shared by the create-connection and connection update commands, in the units
/// the specification uses (interval 1.25 ms, timeout 10 ms, CE length 0.625 ms).
public struct LEConnectionParameters: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        [.field(\.intervalMin), .field(\.intervalMax), .field(\.maxLatency), .field(\.supervisionTimeout),
         .field(\.minCELength), .field(\.maxCELength)]
    }

    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(intervalMin: UInt16 = 0x0018, intervalMax: UInt16 = 0x0028, maxLatency: UInt16 = 0,
                supervisionTimeout: UInt16 = 0x01F4, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    /// The defaults above.
    public init() { self.init(intervalMin: 0x0018) }
}
