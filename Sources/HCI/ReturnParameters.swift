/// The typed return parameters of a Command Complete. Status comes first in all of
/// them; when it is not success, controllers may send the status byte alone, so
/// callers check `HCICommandComplete.status` before decoding the rest.
public protocol HCIReturnParameters: Sendable, Hashable {
    static var opcode: Opcode { get }
    var status: HCIStatus { get }
    init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError)
    func encode(into bytes: inout [UInt8])
}

extension HCIReturnParameters where Self: HCIFieldLayout {
    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        try self.init(decoding: returnParameters, context: .returnParameters(Self.opcode), exact: false)
    }

    public func encode(into bytes: inout [UInt8]) { encodeFields(into: &bytes) }
}

extension HCIReturnParameters {
    public var encoded: [UInt8] {
        var bytes = [UInt8]()
        encode(into: &bytes)
        return bytes
    }
}

/// Read Local Version Information.
public struct LocalVersionInformation: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.readLocalVersionInformation
    public static var fields: [HCIField<Self>] {
        [.field(\.status), .field(\.hciVersion), .field(\.hciRevision), .field(\.lmpVersion), .field(\.manufacturer),
         .field(\.lmpSubversion)]
    }

    public var status = HCIStatus.success
    public var hciVersion: UInt8 = 0
    public var hciRevision: UInt16 = 0
    public var lmpVersion: UInt8 = 0
    /// Bluetooth SIG company identifier.
    public var manufacturer: UInt16 = 0
    public var lmpSubversion: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8,
                manufacturer: UInt16, lmpSubversion: UInt16) {
        self.status = status
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.manufacturer = manufacturer
        self.lmpSubversion = lmpSubversion
    }
}

/// Read Local Supported Commands.
public struct LocalSupportedCommands: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.readLocalSupportedCommands
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.commands)] }
    public var status = HCIStatus.success
    public var commands = SupportedCommands.none

    public init() {}

    public init(status: HCIStatus = .success, commands: SupportedCommands) {
        self.status = status
        self.commands = commands
    }
}

/// Read Local Supported Features (LMP page 0).
public struct LocalSupportedFeatures: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.readLocalSupportedFeatures
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.features)] }
    public var status = HCIStatus.success
    public var features = LMPFeatures(rawValue: 0)

    public init() {}

    public init(status: HCIStatus = .success, features: LMPFeatures) {
        self.status = status
        self.features = features
    }
}

/// Read Buffer Size: the (BR/EDR or shared) ACL buffer pool.
public struct BufferSize: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.readBufferSize
    public static var fields: [HCIField<Self>] {
        [.field(\.status), .field(\.aclDataPacketLength), .field(\.synchronousDataPacketLength), .field(\.totalACLDataPackets),
         .field(\.totalSynchronousDataPackets)]
    }

    public var status = HCIStatus.success
    public var aclDataPacketLength: UInt16 = 0
    public var synchronousDataPacketLength: UInt8 = 0
    public var totalACLDataPackets: UInt16 = 0
    public var totalSynchronousDataPackets: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8 = 0,
                totalACLDataPackets: UInt16, totalSynchronousDataPackets: UInt16 = 0) {
        self.status = status
        self.aclDataPacketLength = aclDataPacketLength
        self.synchronousDataPacketLength = synchronousDataPacketLength
        self.totalACLDataPackets = totalACLDataPackets
        self.totalSynchronousDataPackets = totalSynchronousDataPackets
    }
}

/// Read BD_ADDR: the controller's public address (zero when it has none).
public struct BDAddr: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.readBDAddr
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.address)] }
    public var status = HCIStatus.success
    public var address = BluetoothAddress(rawValue: 0)

    public init() {}

    public init(status: HCIStatus = .success, address: BluetoothAddress) {
        self.status = status
        self.address = address
    }
}

/// Read RSSI of a connection.
public struct ConnectionRSSI: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.readRSSI
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.connectionHandle), .field(\.rssi)] }
    public var status = HCIStatus.success
    public var connectionHandle: UInt16 = 0
    /// dBm; 127 means not available.
    public var rssi: Int8 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, rssi: Int8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.rssi = rssi
    }
}

/// LE Read Buffer Size (v1). A length or count of zero means "no separate LE pool:
/// use the one from Read Buffer Size".
public struct LEBufferSize: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.leReadBufferSize
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.aclDataPacketLength), .field(\.totalACLDataPackets)] }
    public var status = HCIStatus.success
    public var aclDataPacketLength: UInt16 = 0
    public var totalACLDataPackets: UInt8 = 0

    public init() {}

    public init(status: HCIStatus = .success, aclDataPacketLength: UInt16, totalACLDataPackets: UInt8) {
        self.status = status
        self.aclDataPacketLength = aclDataPacketLength
        self.totalACLDataPackets = totalACLDataPackets
    }

    public var isShared: Bool { aclDataPacketLength == 0 || totalACLDataPackets == 0 }
}

/// LE Read Local Supported Features.
public struct LELocalSupportedFeatures: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.leReadLocalSupportedFeatures
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.features)] }
    public var status = HCIStatus.success
    public var features = LEFeatures(rawValue: 0)

    public init() {}

    public init(status: HCIStatus = .success, features: LEFeatures) {
        self.status = status
        self.features = features
    }
}

/// LE Read Supported States.
public struct LESupportedStatesReturn: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.leReadSupportedStates
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.states)] }
    public var status = HCIStatus.success
    public var states = LESupportedStates(rawValue: 0)

    public init() {}

    public init(status: HCIStatus = .success, states: LESupportedStates) {
        self.status = status
        self.states = states
    }
}

/// LE Read Filter Accept List Size.
public struct FilterAcceptListSize: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.leReadFilterAcceptListSize
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.size)] }
    public var status = HCIStatus.success
    public var size: UInt8 = 0

    public init() {}

    public init(status: HCIStatus = .success, size: UInt8) {
        self.status = status
        self.size = size
    }
}

/// LE Set Extended Advertising Parameters: the TX power the controller chose.
public struct ExtendedAdvertisingParametersReturn: HCIReturnParameters, HCIFieldLayout {
    public static let opcode = Opcode.leSetExtendedAdvertisingParameters
    public static var fields: [HCIField<Self>] { [.field(\.status), .field(\.selectedTxPower)] }
    public var status = HCIStatus.success
    public var selectedTxPower: Int8 = 0

    public init() {}

    public init(status: HCIStatus = .success, selectedTxPower: Int8) {
        self.status = status
        self.selectedTxPower = selectedTxPower
    }
}
