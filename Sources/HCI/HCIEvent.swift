/// An HCI event decoded from an event packet. Events this host does not use stay
/// available as `.unknown` / `.leMeta(.unknown)` with their raw parameters.
public enum HCIEvent: Hashable, Sendable {
    case commandComplete(HCICommandComplete)
    case commandStatus(HCICommandStatus)
    case disconnectionComplete(HCIDisconnectionComplete)
    case numberOfCompletedPackets([HCICompletedPackets])
    case hardwareError(code: UInt8)
    /// Encryption Change, v1 or v2 (see `format`).
    case encryptionChange(HCIEncryptionChange)
    case encryptionKeyRefreshComplete(HCIEncryptionKeyRefreshComplete)
    case leMeta(LEMetaEvent)
    case unknown(code: EventCode, parameters: ArraySlice<UInt8>)

    /// The number of commands the controller accepts now, for events that say so.
    public var numberOfCommandPackets: UInt8? {
        switch self {
        case .commandComplete(let event): event.numberOfCommandPackets
        case .commandStatus(let event): event.numberOfCommandPackets
        default: nil
        }
    }
}

/// The LE Meta event's subevents.
public enum LEMetaEvent: Hashable, Sendable {
    case advertisingReport([LEAdvertisingReport])
    case extendedAdvertisingReport([LEAdvertisingReport])
    /// LE Connection Complete, Enhanced Connection Complete v1 or v2 (see `format`).
    case connectionComplete(LEConnectionComplete)
    case connectionUpdateComplete(LEConnectionUpdateComplete)
    case longTermKeyRequest(LELongTermKeyRequest)
    case unknown(subevent: LESubeventCode, parameters: ArraySlice<UInt8>)
}

/// Command Complete: the answer to a command, with its return parameters.
public struct HCICommandComplete: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        [.field(\.numberOfCommandPackets), .field(\.opcode), .field(\.returnParameters, .rest)]
    }

    public var numberOfCommandPackets: UInt8 = 0
    public var opcode = Opcode(rawValue: 0)
    /// Status first, then the command's own fields (empty for a no-op credit grant).
    public var returnParameters: ArraySlice<UInt8> = []

    public init() {}

    public init(numberOfCommandPackets: UInt8 = 1, opcode: Opcode, returnParameters: ArraySlice<UInt8>) {
        self.numberOfCommandPackets = numberOfCommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    /// The status byte; `nil` when there are no return parameters at all.
    public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }

    /// Decodes the return parameters as `R`, checking the opcode.
    public func decode<R: HCIReturnParameters>(_ type: R.Type) throws(HCIDecodingError) -> R {
        guard opcode == R.opcode else { throw .opcodeMismatch(expected: R.opcode, actual: opcode) }
        return try R(returnParameters: returnParameters)
    }
}

/// Command Status: the controller accepted (or refused) a command whose outcome comes later.
public struct HCICommandStatus: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.numberOfCommandPackets), .field(\.opcode)] }
    public var status = HCIStatus.success
    public var numberOfCommandPackets: UInt8 = 0
    public var opcode = Opcode(rawValue: 0)

    public init() {}

    public init(status: HCIStatus, numberOfCommandPackets: UInt8 = 1, opcode: Opcode) {
        self.status = status
        self.numberOfCommandPackets = numberOfCommandPackets
        self.opcode = opcode
    }
}

public struct HCIDisconnectionComplete: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        [.field(\.status), .field(\.connectionHandle, .connectionHandle), .field(\.reason)]
    }

    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    public var reason = HCIStatus.success

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, reason: HCIStatus) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.reason = reason
    }
}

/// One entry of Number Of Completed Packets: ACL buffers freed for a connection.
public struct HCICompletedPackets: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] { [.field(\.connectionHandle, .connectionHandle), .field(\.count)] }
    public var connectionHandle: UInt16 = 0
    public var count: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16, count: UInt16) {
        self.connectionHandle = connectionHandle
        self.count = count
    }
}

/// LE Connection Complete in any of its three formats.
public struct LEConnectionComplete: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        let enhanced: (Self) -> Bool = { $0.format != .legacy }
        let v2: (Self) -> Bool = { $0.format == .enhancedV2 }
        return [.field(\.status), .field(\.connectionHandle, .connectionHandle), .field(\.role), .field(\.peerAddressType),
                .field(\.peerAddress), .field(\.localResolvablePrivateAddress).only(when: enhanced),
                .field(\.peerResolvablePrivateAddress).only(when: enhanced), .field(\.connectionInterval),
                .field(\.peripheralLatency), .field(\.supervisionTimeout), .field(\.centralClockAccuracy),
                .field(\.advertisingHandle).only(when: v2), .field(\.syncHandle).only(when: v2)]
    }

    public enum Format: Hashable, Sendable {
        /// Subevent 0x01.
        case legacy
        /// Enhanced Connection Complete, subevent 0x0A.
        case enhanced
        /// Enhanced Connection Complete v2, subevent 0x29.
        case enhancedV2
    }

    public struct Role: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let central = Role(rawValue: 0x00)
        public static let peripheral = Role(rawValue: 0x01)
    }

    public var format = Format.enhanced
    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    public var role = Role.central
    public var peerAddressType = AddressType.publicDevice
    public var peerAddress = BluetoothAddress(rawValue: 0)
    /// Enhanced formats only (zero otherwise).
    public var localResolvablePrivateAddress = BluetoothAddress(rawValue: 0)
    /// Enhanced formats only (zero otherwise).
    public var peerResolvablePrivateAddress = BluetoothAddress(rawValue: 0)
    /// 1.25 ms units.
    public var connectionInterval: UInt16 = 0
    public var peripheralLatency: UInt16 = 0
    /// 10 ms units.
    public var supervisionTimeout: UInt16 = 0
    public var centralClockAccuracy: UInt8 = 0
    /// v2 only (0xFF otherwise).
    public var advertisingHandle: UInt8 = 0xFF
    /// v2 only (0xFFFF otherwise).
    public var syncHandle: UInt16 = 0xFFFF

    public init() {}

    public init(format: Format = .enhanced, status: HCIStatus = .success, connectionHandle: UInt16,
                role: Role = .central, peerAddressType: AddressType, peerAddress: BluetoothAddress,
                localResolvablePrivateAddress: BluetoothAddress = BluetoothAddress(rawValue: 0),
                peerResolvablePrivateAddress: BluetoothAddress = BluetoothAddress(rawValue: 0),
                connectionInterval: UInt16 = 0x0018, peripheralLatency: UInt16 = 0, supervisionTimeout: UInt16 = 0x01F4,
                centralClockAccuracy: UInt8 = 0, advertisingHandle: UInt8 = 0xFF, syncHandle: UInt16 = 0xFFFF) {
        self.format = format
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
        self.advertisingHandle = advertisingHandle
        self.syncHandle = syncHandle
    }
}

public struct LEConnectionUpdateComplete: Hashable, Sendable, HCIFieldLayout {
    public static var fields: [HCIField<Self>] {
        [.field(\.status), .field(\.connectionHandle, .connectionHandle), .field(\.connectionInterval),
         .field(\.peripheralLatency), .field(\.supervisionTimeout)]
    }

    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    public var connectionInterval: UInt16 = 0
    public var peripheralLatency: UInt16 = 0
    public var supervisionTimeout: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, connectionInterval: UInt16,
                peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }
}
