// Initiating connections, in both command families, and updating one.

/// Legacy: LE Create Connection (answered by Command Status; the connection
/// itself completes with an LE (Enhanced) Connection Complete event).
public struct LECreateConnectionCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leCreateConnection
    public static let expectedResponse = HCIExpectedResponse.commandStatus
    public static var fields: [HCIField<Self>] {
        [.field(\.scanInterval), .field(\.scanWindow), .field(\.filterPolicy), .field(\.peerAddressType),
         .field(\.peerAddress), .field(\.ownAddressType), .field(\.connection)]
    }

    public var scanInterval: UInt16 = 0
    public var scanWindow: UInt16 = 0
    public var filterPolicy = InitiatorFilterPolicy.peerAddress
    public var peerAddressType = AddressType.publicDevice
    public var peerAddress = BluetoothAddress(rawValue: 0)
    public var ownAddressType = AddressType.publicDevice
    public var connection = LEConnectionParameters()

    public init() {}

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
}

/// Extended: LE Extended Create Connection (v1), with parameters per initiating PHY.
public struct LEExtendedCreateConnectionCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leExtendedCreateConnection
    public static let expectedResponse = HCIExpectedResponse.commandStatus
    public static var fields: [HCIField<Self>] {
        [.field(\.filterPolicy), .field(\.ownAddressType), .field(\.peerAddressType), .field(\.peerAddress),
         .phyEntries([(.le1M, \.le1M), (.le2M, \.le2M), (.leCoded, \.leCoded)])]
    }

    public struct PHYParameters: Hashable, Sendable, HCIFieldLayout {
        public static var fields: [HCIField<Self>] { [.field(\.scanInterval), .field(\.scanWindow), .field(\.connection)] }
        public var scanInterval: UInt16
        public var scanWindow: UInt16
        public var connection: LEConnectionParameters
        public init() { self.init(scanInterval: 0x0060) }
        public init(scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0030,
                    connection: LEConnectionParameters = LEConnectionParameters()) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connection = connection
        }
    }

    public var filterPolicy = InitiatorFilterPolicy.peerAddress
    public var ownAddressType = AddressType.publicDevice
    public var peerAddressType = AddressType.publicDevice
    public var peerAddress = BluetoothAddress(rawValue: 0)
    public var le1M: PHYParameters?
    public var le2M: PHYParameters?
    public var leCoded: PHYParameters?

    public init() {}

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
}

/// LE Create Connection Cancel: ends a pending create-connection of either family.
public struct LECreateConnectionCancelCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leCreateConnectionCancel
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public init() {}
}

/// LE Connection Update: asks the controller to move a connection to new parameters
/// (answered by Command Status; LE Connection Update Complete follows). Units as in
/// `LEConnectionParameters`.
public struct LEConnectionUpdateCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leConnectionUpdate
    public static let expectedResponse = HCIExpectedResponse.commandStatus
    public static var fields: [HCIField<Self>] { [.field(\.connectionHandle), .field(\.connection)] }
    public var connectionHandle: UInt16 = 0
    public var connection = LEConnectionParameters()

    public init() {}

    public init(connectionHandle: UInt16, connection: LEConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.connection = connection
    }
}
