/// LE signalling channel command codes (Core Vol 3 Part A §4).
public struct L2CAPSignallingCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = L2CAPSignallingCode(rawValue: 0x01)
    public static let disconnectionRequest = L2CAPSignallingCode(rawValue: 0x06)
    public static let disconnectionResponse = L2CAPSignallingCode(rawValue: 0x07)
    public static let connectionParameterUpdateRequest = L2CAPSignallingCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = L2CAPSignallingCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = L2CAPSignallingCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = L2CAPSignallingCode(rawValue: 0x15)
    public static let flowControlCredit = L2CAPSignallingCode(rawValue: 0x16)
    public static let creditBasedConnectionRequest = L2CAPSignallingCode(rawValue: 0x17)
    public static let creditBasedConnectionResponse = L2CAPSignallingCode(rawValue: 0x18)
    public static let creditBasedReconfigureRequest = L2CAPSignallingCode(rawValue: 0x19)
    public static let creditBasedReconfigureResponse = L2CAPSignallingCode(rawValue: 0x1A)

    /// Responses (and Command Reject) answer a request of ours; we send none, so any that
    /// arrive are ignored rather than answered, which would invite a loop.
    public var isResponse: Bool {
        switch self {
        case .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse,
             .leCreditBasedConnectionResponse, .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
            true
        default:
            false
        }
    }
}

/// Command Reject reasons.
public struct L2CAPRejectReason: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let commandNotUnderstood = L2CAPRejectReason(rawValue: 0x0000)
    public static let signallingMTUExceeded = L2CAPRejectReason(rawValue: 0x0001)
    public static let invalidCIDInRequest = L2CAPRejectReason(rawValue: 0x0002)
}

/// Connection parameters a peripheral asks for (all in the controller's units).
public struct ConnectionParameterRequest: Hashable, Sendable {
    /// 1.25 ms units.
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var peripheralLatency: UInt16
    /// 10 ms units.
    public var supervisionTimeout: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    /// The ranges of Core Vol 3 Part A §4.20 and Vol 4 Part E §7.8.18, and the rule that the
    /// supervision timeout exceeds (1 + latency) × interval_max × 2.
    public var isValid: Bool {
        guard (6 ... 3200).contains(intervalMin), (6 ... 3200).contains(intervalMax), intervalMin <= intervalMax,
              peripheralLatency <= 499, (10 ... 3200).contains(supervisionTimeout) else { return false }
        // timeout × 10 ms > (1 + latency) × max × 1.25 ms × 2  ⇔  timeout × 4 > (1 + latency) × max
        return Int(supervisionTimeout) * 4 > (1 + Int(peripheralLatency)) * Int(intervalMax)
    }
}
