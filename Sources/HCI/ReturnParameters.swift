/// The typed return parameters of a Command Complete. Status comes first in all of
/// them; when it is not success, controllers may send the status byte alone, so
/// callers check `HCICommandComplete.status` before decoding the rest.
public protocol HCIReturnParameters: Sendable, Hashable {
    static var opcode: Opcode { get }
    var status: HCIStatus { get }
    init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError)
    func encode(into bytes: inout [UInt8])
}

extension HCIReturnParameters {
    public var encoded: [UInt8] {
        var bytes = [UInt8]()
        encode(into: &bytes)
        return bytes
    }
}

/// Read Local Version Information.
public struct LocalVersionInformation: HCIReturnParameters {
    public static let opcode = Opcode.readLocalVersionInformation
    public var status: HCIStatus
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    /// Bluetooth SIG company identifier.
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16

    public init(status: HCIStatus = .success, hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8,
                manufacturer: UInt16, lmpSubversion: UInt16) {
        self.status = status
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.manufacturer = manufacturer
        self.lmpSubversion = lmpSubversion
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        hciVersion = try reader.u8()
        hciRevision = try reader.u16()
        lmpVersion = try reader.u8()
        manufacturer = try reader.u16()
        lmpSubversion = try reader.u16()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.append(hciVersion)
        bytes.appendLE(hciRevision)
        bytes.append(lmpVersion)
        bytes.appendLE(manufacturer)
        bytes.appendLE(lmpSubversion)
    }
}

/// Read Local Supported Commands.
public struct LocalSupportedCommands: HCIReturnParameters {
    public static let opcode = Opcode.readLocalSupportedCommands
    public var status: HCIStatus
    public var commands: SupportedCommands

    public init(status: HCIStatus = .success, commands: SupportedCommands) {
        self.status = status
        self.commands = commands
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        commands = SupportedCommands(octets: try reader.slice(SupportedCommands.octetCount))
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.append(contentsOf: commands.octets)
    }
}

/// Read Local Supported Features (LMP page 0).
public struct LocalSupportedFeatures: HCIReturnParameters {
    public static let opcode = Opcode.readLocalSupportedFeatures
    public var status: HCIStatus
    public var features: LMPFeatures

    public init(status: HCIStatus = .success, features: LMPFeatures) {
        self.status = status
        self.features = features
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        features = LMPFeatures(rawValue: try reader.u64())
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendLE(features.rawValue)
    }
}

/// Read Buffer Size: the (BR/EDR or shared) ACL buffer pool.
public struct BufferSize: HCIReturnParameters {
    public static let opcode = Opcode.readBufferSize
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var synchronousDataPacketLength: UInt8
    public var totalACLDataPackets: UInt16
    public var totalSynchronousDataPackets: UInt16

    public init(status: HCIStatus = .success, aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8 = 0,
                totalACLDataPackets: UInt16, totalSynchronousDataPackets: UInt16 = 0) {
        self.status = status
        self.aclDataPacketLength = aclDataPacketLength
        self.synchronousDataPacketLength = synchronousDataPacketLength
        self.totalACLDataPackets = totalACLDataPackets
        self.totalSynchronousDataPackets = totalSynchronousDataPackets
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        aclDataPacketLength = try reader.u16()
        synchronousDataPacketLength = try reader.u8()
        totalACLDataPackets = try reader.u16()
        totalSynchronousDataPackets = try reader.u16()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendLE(aclDataPacketLength)
        bytes.append(synchronousDataPacketLength)
        bytes.appendLE(totalACLDataPackets)
        bytes.appendLE(totalSynchronousDataPackets)
    }
}

/// Read BD_ADDR: the controller's public address (zero when it has none).
public struct BDAddr: HCIReturnParameters {
    public static let opcode = Opcode.readBDAddr
    public var status: HCIStatus
    public var address: BluetoothAddress

    public init(status: HCIStatus = .success, address: BluetoothAddress) {
        self.status = status
        self.address = address
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        address = try reader.address()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendAddress(address)
    }
}

/// Read RSSI of a connection.
public struct ConnectionRSSI: HCIReturnParameters {
    public static let opcode = Opcode.readRSSI
    public var status: HCIStatus
    public var connectionHandle: UInt16
    /// dBm; 127 means not available.
    public var rssi: Int8

    public init(status: HCIStatus = .success, connectionHandle: UInt16, rssi: Int8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.rssi = rssi
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        connectionHandle = try reader.u16()
        rssi = try reader.i8()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendLE(connectionHandle)
        bytes.append(UInt8(bitPattern: rssi))
    }
}

/// LE Read Buffer Size (v1). A length or count of zero means "no separate LE pool:
/// use the one from Read Buffer Size".
public struct LEBufferSize: HCIReturnParameters {
    public static let opcode = Opcode.leReadBufferSize
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var totalACLDataPackets: UInt8

    public init(status: HCIStatus = .success, aclDataPacketLength: UInt16, totalACLDataPackets: UInt8) {
        self.status = status
        self.aclDataPacketLength = aclDataPacketLength
        self.totalACLDataPackets = totalACLDataPackets
    }

    public var isShared: Bool { aclDataPacketLength == 0 || totalACLDataPackets == 0 }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        aclDataPacketLength = try reader.u16()
        totalACLDataPackets = try reader.u8()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendLE(aclDataPacketLength)
        bytes.append(totalACLDataPackets)
    }
}

/// LE Read Local Supported Features.
public struct LELocalSupportedFeatures: HCIReturnParameters {
    public static let opcode = Opcode.leReadLocalSupportedFeatures
    public var status: HCIStatus
    public var features: LEFeatures

    public init(status: HCIStatus = .success, features: LEFeatures) {
        self.status = status
        self.features = features
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        features = LEFeatures(rawValue: try reader.u64())
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendLE(features.rawValue)
    }
}

/// LE Read Supported States.
public struct LESupportedStatesReturn: HCIReturnParameters {
    public static let opcode = Opcode.leReadSupportedStates
    public var status: HCIStatus
    public var states: LESupportedStates

    public init(status: HCIStatus = .success, states: LESupportedStates) {
        self.status = status
        self.states = states
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        states = LESupportedStates(rawValue: try reader.u64())
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.appendLE(states.rawValue)
    }
}

/// LE Read Filter Accept List Size.
public struct FilterAcceptListSize: HCIReturnParameters {
    public static let opcode = Opcode.leReadFilterAcceptListSize
    public var status: HCIStatus
    public var size: UInt8

    public init(status: HCIStatus = .success, size: UInt8) {
        self.status = status
        self.size = size
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        size = try reader.u8()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.append(size)
    }
}

/// LE Set Extended Advertising Parameters: the TX power the controller chose.
public struct ExtendedAdvertisingParametersReturn: HCIReturnParameters {
    public static let opcode = Opcode.leSetExtendedAdvertisingParameters
    public var status: HCIStatus
    public var selectedTxPower: Int8

    public init(status: HCIStatus = .success, selectedTxPower: Int8) {
        self.status = status
        self.selectedTxPower = selectedTxPower
    }

    public init(returnParameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(returnParameters, context: .returnParameters(Self.opcode))
        status = HCIStatus(rawValue: try reader.u8())
        selectedTxPower = try reader.i8()
    }

    public func encode(into bytes: inout [UInt8]) {
        bytes.append(status.rawValue)
        bytes.append(UInt8(bitPattern: selectedTxPower))
    }
}
