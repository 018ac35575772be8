/// The Set Event Mask bits: which (non-LE) events the controller may send.
public struct EventMask: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let disconnectionComplete = EventMask(rawValue: 1 << 4)
    public static let encryptionChange = EventMask(rawValue: 1 << 7)
    public static let readRemoteVersionInformationComplete = EventMask(rawValue: 1 << 11)
    public static let hardwareError = EventMask(rawValue: 1 << 15)
    public static let dataBufferOverflow = EventMask(rawValue: 1 << 25)
    public static let encryptionKeyRefreshComplete = EventMask(rawValue: 1 << 47)
    public static let leMeta = EventMask(rawValue: 1 << 61)

    /// What an LE-only gateway needs.
    public static let gatewayDefault: EventMask = [
        .disconnectionComplete, .encryptionChange, .readRemoteVersionInformationComplete,
        .hardwareError, .dataBufferOverflow, .encryptionKeyRefreshComplete, .leMeta,
    ]
}

/// The LE Set Event Mask bits: which LE Meta subevents the controller may send.
public struct LEEventMask: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(_ subevent: LESubeventCode) { rawValue = subevent.eventMaskBit }

    public static let connectionComplete = LEEventMask(.connectionComplete)
    public static let advertisingReport = LEEventMask(.advertisingReport)
    public static let connectionUpdateComplete = LEEventMask(.connectionUpdateComplete)
    public static let readRemoteFeaturesComplete = LEEventMask(.readRemoteFeaturesComplete)
    public static let longTermKeyRequest = LEEventMask(.longTermKeyRequest)
    public static let remoteConnectionParameterRequest = LEEventMask(.remoteConnectionParameterRequest)
    public static let dataLengthChange = LEEventMask(.dataLengthChange)
    public static let enhancedConnectionComplete = LEEventMask(.enhancedConnectionComplete)
    public static let phyUpdateComplete = LEEventMask(.phyUpdateComplete)
    public static let extendedAdvertisingReport = LEEventMask(.extendedAdvertisingReport)
    public static let scanTimeout = LEEventMask(.scanTimeout)
    public static let advertisingSetTerminated = LEEventMask(.advertisingSetTerminated)
    public static let channelSelectionAlgorithm = LEEventMask(.channelSelectionAlgorithm)

    /// The subevents the gateway uses. LE Long Term Key Request is on: the host answers
    /// every one (with the enrolment's key, or a negative reply; docs/pairing.md).
    /// Remote connection parameter requests stay masked so the controller answers them
    /// itself. Enhanced Connection Complete v2 (bit 40) is left out on purpose: older
    /// controllers reject unknown mask bits, and v1 carries all the gateway needs.
    public static let gatewayDefault: LEEventMask = [
        .connectionComplete, .advertisingReport, .connectionUpdateComplete,
        .readRemoteFeaturesComplete, .longTermKeyRequest, .dataLengthChange, .enhancedConnectionComplete,
        .phyUpdateComplete, .extendedAdvertisingReport, .scanTimeout, .advertisingSetTerminated,
        .channelSelectionAlgorithm,
    ]
}
