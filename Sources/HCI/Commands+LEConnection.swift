// Initiating connections, in both command families.

/// Legacy: LE Create Connection (answered by Command Status; the connection
/// itself completes with an LE (Enhanced) Connection Complete event).
public struct LECreateConnectionCommand: HCICommand {
    public static let opcode = Opcode.leCreateConnection
    public static let expectedResponse = HCIExpectedResponse.commandStatus
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    public var filterPolicy: InitiatorFilterPolicy
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var ownAddressType: AddressType
    public var connection: LEConnectionParameters

    public init(scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0030, filterPolicy: InitiatorFilterPolicy,
                peerAddressType: AddressType = .publicDevice, peerAddress: BluetoothAddress = BluetoothAddress(rawValue: 0),
                ownAddressType: AddressType = .publicDevice, connection: LEConnectionParameters = LEConnectionParameters()) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.filterPolicy = filterPolicy
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connection = connection
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE(scanInterval)
        bytes.appendLE(scanWindow)
        bytes.append(filterPolicy.rawValue)
        bytes.append(peerAddressType.rawValue)
        bytes.appendAddress(peerAddress)
        bytes.append(ownAddressType.rawValue)
        connection.encode(into: &bytes)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        scanInterval = try reader.u16()
        scanWindow = try reader.u16()
        filterPolicy = InitiatorFilterPolicy(rawValue: try reader.u8())
        peerAddressType = AddressType(rawValue: try reader.u8())
        peerAddress = try reader.address()
        ownAddressType = AddressType(rawValue: try reader.u8())
        connection = try LEConnectionParameters(from: &reader)
        try reader.requireEnd()
    }
}

/// Extended: LE Extended Create Connection (v1), with parameters per initiating PHY.
public struct LEExtendedCreateConnectionCommand: HCICommand {
    public static let opcode = Opcode.leExtendedCreateConnection
    public static let expectedResponse = HCIExpectedResponse.commandStatus

    public struct PHYParameters: Hashable, Sendable {
        public var scanInterval: UInt16
        public var scanWindow: UInt16
        public var connection: LEConnectionParameters
        public init(scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0030,
                    connection: LEConnectionParameters = LEConnectionParameters()) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connection = connection
        }
    }

    public var filterPolicy: InitiatorFilterPolicy
    public var ownAddressType: AddressType
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var le1M: PHYParameters?
    public var le2M: PHYParameters?
    public var leCoded: PHYParameters?

    public init(filterPolicy: InitiatorFilterPolicy, ownAddressType: AddressType = .publicDevice,
                peerAddressType: AddressType = .publicDevice, peerAddress: BluetoothAddress = BluetoothAddress(rawValue: 0),
                le1M: PHYParameters? = PHYParameters(), le2M: PHYParameters? = nil, leCoded: PHYParameters? = nil) {
        self.filterPolicy = filterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.le1M = le1M
        self.le2M = le2M
        self.leCoded = leCoded
    }

    public var phys: LEPhys {
        var phys: LEPhys = []
        if le1M != nil { phys.insert(.le1M) }
        if le2M != nil { phys.insert(.le2M) }
        if leCoded != nil { phys.insert(.leCoded) }
        return phys
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(filterPolicy.rawValue)
        bytes.append(ownAddressType.rawValue)
        bytes.append(peerAddressType.rawValue)
        bytes.appendAddress(peerAddress)
        bytes.append(phys.rawValue)
        for entry in [le1M, le2M, leCoded] {
            guard let entry else { continue }
            bytes.appendLE(entry.scanInterval)
            bytes.appendLE(entry.scanWindow)
            entry.connection.encode(into: &bytes)
        }
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        filterPolicy = InitiatorFilterPolicy(rawValue: try reader.u8())
        ownAddressType = AddressType(rawValue: try reader.u8())
        peerAddressType = AddressType(rawValue: try reader.u8())
        peerAddress = try reader.address()
        let phys = LEPhys(rawValue: try reader.u8())
        guard phys.subtracting([.le1M, .le2M, .leCoded]).isEmpty else {
            throw .invalidValue(reader.context, field: .phys, value: Int(phys.rawValue))
        }
        func entry(_ reader: inout HCIByteReader) throws(HCIDecodingError) -> PHYParameters {
            PHYParameters(scanInterval: try reader.u16(), scanWindow: try reader.u16(),
                          connection: try LEConnectionParameters(from: &reader))
        }
        le1M = phys.contains(.le1M) ? try entry(&reader) : nil
        le2M = phys.contains(.le2M) ? try entry(&reader) : nil
        leCoded = phys.contains(.leCoded) ? try entry(&reader) : nil
        try reader.requireEnd()
    }
}

/// LE Create Connection Cancel: ends a pending create-connection of either family.
public struct LECreateConnectionCancelCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leCreateConnectionCancel
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public init() {}
}
