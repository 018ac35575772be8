/// An HCI error code (Core spec Vol 1 Part F), as carried in Command Complete,
/// Command Status, connection and disconnection events.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Error {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public var isSuccess: Bool { self == .success }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let unknownConnection = HCIStatus(rawValue: 0x02)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let pageTimeout = HCIStatus(rawValue: 0x04)
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    public static let pinOrKeyMissing = HCIStatus(rawValue: 0x06)
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    public static let connectionLimitExceeded = HCIStatus(rawValue: 0x09)
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let limitedResources = HCIStatus(rawValue: 0x0D)
    public static let securityReasons = HCIStatus(rawValue: 0x0E)
    public static let unacceptableAddress = HCIStatus(rawValue: 0x0F)
    public static let connectionAcceptTimeout = HCIStatus(rawValue: 0x10)
    public static let unsupportedFeatureOrParameter = HCIStatus(rawValue: 0x11)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let remoteUserTerminated = HCIStatus(rawValue: 0x13)
    public static let remoteLowResources = HCIStatus(rawValue: 0x14)
    public static let remotePowerOff = HCIStatus(rawValue: 0x15)
    public static let localHostTerminated = HCIStatus(rawValue: 0x16)
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    public static let invalidLLParameters = HCIStatus(rawValue: 0x1E)
    public static let unspecifiedError = HCIStatus(rawValue: 0x1F)
    public static let unsupportedLLParameterValue = HCIStatus(rawValue: 0x20)
    public static let llResponseTimeout = HCIStatus(rawValue: 0x22)
    public static let llProcedureCollision = HCIStatus(rawValue: 0x23)
    public static let instantPassed = HCIStatus(rawValue: 0x28)
    public static let differentTransactionCollision = HCIStatus(rawValue: 0x2A)
    public static let controllerBusy = HCIStatus(rawValue: 0x3A)
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    public static let advertisingTimeout = HCIStatus(rawValue: 0x3C)
    public static let micFailure = HCIStatus(rawValue: 0x3D)
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
    public static let limitReached = HCIStatus(rawValue: 0x43)
    public static let operationCancelledByHost = HCIStatus(rawValue: 0x44)
    public static let packetTooLong = HCIStatus(rawValue: 0x45)

    /// The specification's name, lower case, for logs.
    public var name: String {
        switch self {
        case .success: "success"
        case .unknownCommand: "unknown HCI command"
        case .unknownConnection: "unknown connection identifier"
        case .hardwareFailure: "hardware failure"
        case .pageTimeout: "page timeout"
        case .authenticationFailure: "authentication failure"
        case .pinOrKeyMissing: "PIN or key missing"
        case .memoryCapacityExceeded: "memory capacity exceeded"
        case .connectionTimeout: "connection timeout"
        case .connectionLimitExceeded: "connection limit exceeded"
        case .connectionAlreadyExists: "connection already exists"
        case .commandDisallowed: "command disallowed"
        case .limitedResources: "connection rejected due to limited resources"
        case .securityReasons: "connection rejected due to security reasons"
        case .unacceptableAddress: "connection rejected due to unacceptable BD_ADDR"
        case .connectionAcceptTimeout: "connection accept timeout exceeded"
        case .unsupportedFeatureOrParameter: "unsupported feature or parameter value"
        case .invalidParameters: "invalid HCI command parameters"
        case .remoteUserTerminated: "remote user terminated connection"
        case .remoteLowResources: "remote device terminated connection due to low resources"
        case .remotePowerOff: "remote device terminated connection due to power off"
        case .localHostTerminated: "connection terminated by local host"
        case .unsupportedRemoteFeature: "unsupported remote feature"
        case .invalidLLParameters: "invalid LMP/LL parameters"
        case .unspecifiedError: "unspecified error"
        case .unsupportedLLParameterValue: "unsupported LMP/LL parameter value"
        case .llResponseTimeout: "LMP/LL response timeout"
        case .llProcedureCollision: "LMP/LL error transaction collision"
        case .instantPassed: "instant passed"
        case .differentTransactionCollision: "different transaction collision"
        case .controllerBusy: "controller busy"
        case .unacceptableConnectionParameters: "unacceptable connection parameters"
        case .advertisingTimeout: "advertising timeout"
        case .micFailure: "connection terminated due to MIC failure"
        case .connectionFailedToBeEstablished: "connection failed to be established"
        case .unknownAdvertisingIdentifier: "unknown advertising identifier"
        case .limitReached: "limit reached"
        case .operationCancelledByHost: "operation cancelled by host"
        case .packetTooLong: "packet too long"
        default: "error"
        }
    }

    public var description: String {
        "0x" + (rawValue < 0x10 ? "0" : "") + String(rawValue, radix: 16) + " (" + name + ")"
    }
}
