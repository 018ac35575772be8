/// Passive scanning only listens; active scanning also sends SCAN_REQ for scan responses.
public struct LEScanType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let passive = LEScanType(rawValue: 0x00)
    public static let active = LEScanType(rawValue: 0x01)
}

/// One LE PHY as reported in extended advertising reports and PHY fields.
public struct LEPhy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// "No packets on the secondary advertising channel" in extended reports.
    public static let none = LEPhy(rawValue: 0x00)
    public static let le1M = LEPhy(rawValue: 0x01)
    public static let le2M = LEPhy(rawValue: 0x02)
    public static let leCoded = LEPhy(rawValue: 0x03)
}

/// A set of PHYs (Scanning_PHYs, Initiating_PHYs): one bit each.
public struct LEPhys: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let le1M = LEPhys(rawValue: 1 << 0)
    public static let le2M = LEPhys(rawValue: 1 << 1)
    public static let leCoded = LEPhys(rawValue: 1 << 2)
}

/// Scanning_Filter_Policy.
public struct ScanningFilterPolicy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let acceptAll = ScanningFilterPolicy(rawValue: 0x00)
    public static let filterAcceptListOnly = ScanningFilterPolicy(rawValue: 0x01)
}

/// Initiator_Filter_Policy: connect to the one peer named, or to any device in the
/// Filter Accept List.
public struct InitiatorFilterPolicy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let peerAddress = InitiatorFilterPolicy(rawValue: 0x00)
    public static let filterAcceptList = InitiatorFilterPolicy(rawValue: 0x01)
}

/// Advertising_Filter_Policy.
public struct AdvertisingFilterPolicy: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let acceptAll = AdvertisingFilterPolicy(rawValue: 0x00)
}

/// Advertising_Type of LE Set Advertising Parameters (legacy).
public struct LegacyAdvertisingType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let connectableUndirected = LegacyAdvertisingType(rawValue: 0x00)
    public static let connectableDirectedHighDuty = LegacyAdvertisingType(rawValue: 0x01)
    public static let scannableUndirected = LegacyAdvertisingType(rawValue: 0x02)
    public static let nonConnectableUndirected = LegacyAdvertisingType(rawValue: 0x03)
    public static let connectableDirectedLowDuty = LegacyAdvertisingType(rawValue: 0x04)
}

/// Advertising_Event_Properties of LE Set Extended Advertising Parameters.
public struct LEAdvertisingEventProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let connectable = LEAdvertisingEventProperties(rawValue: 1 << 0)
    public static let scannable = LEAdvertisingEventProperties(rawValue: 1 << 1)
    public static let directed = LEAdvertisingEventProperties(rawValue: 1 << 2)
    public static let highDutyDirected = LEAdvertisingEventProperties(rawValue: 1 << 3)
    public static let legacy = LEAdvertisingEventProperties(rawValue: 1 << 4)
    public static let omitAddress = LEAdvertisingEventProperties(rawValue: 1 << 5)
    public static let includeTxPower = LEAdvertisingEventProperties(rawValue: 1 << 6)
}

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
