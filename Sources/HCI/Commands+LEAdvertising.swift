// Advertising (the gateway as the door's beacon), in both command families.

/// Legacy: LE Set Advertising Parameters. Intervals in 0.625 ms units.
public struct LESetAdvertisingParametersCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetAdvertisingParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] {
        [.field(\.intervalMin), .field(\.intervalMax), .field(\.type), .field(\.ownAddressType), .field(\.peerAddressType),
         .field(\.peerAddress), .field(\.channelMap), .field(\.filterPolicy)]
    }

    public var intervalMin: UInt16 = 0
    public var intervalMax: UInt16 = 0
    public var type = LegacyAdvertisingType.connectableUndirected
    public var ownAddressType = AddressType.publicDevice
    public var peerAddressType = AddressType.publicDevice
    public var peerAddress = BluetoothAddress(rawValue: 0)
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var channelMap: UInt8 = 0
    public var filterPolicy = AdvertisingFilterPolicy.acceptAll

    public init() {}

    public init(intervalMin: UInt16, intervalMax: UInt16, type: LegacyAdvertisingType,
                ownAddressType: AddressType = .publicDevice, peerAddressType: AddressType = .publicDevice,
                peerAddress: BluetoothAddress = BluetoothAddress(rawValue: 0), channelMap: UInt8 = 0x07,
                filterPolicy: AdvertisingFilterPolicy = .acceptAll) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.type = type
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }
}

/// Legacy: LE Set Advertising Data: always 1 length byte + 31 bytes, zero padded.
public struct LESetAdvertisingDataCommand: LELegacyDataCommand {
    public static let opcode = Opcode.leSetAdvertisingData
    /// At most 31 bytes; longer data is cut when encoded.
    public var data: [UInt8] = []
    public init() {}
}

/// Legacy: LE Set Advertising Enable.
public struct LESetAdvertisingEnableCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetAdvertisingEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.enable)] }
    public var enable = false
    public init() {}
    public init(enable: Bool) { self.enable = enable }
}

/// Extended: LE Set Extended Advertising Parameters (v1). Intervals are 24-bit, in
/// 0.625 ms units. Returns the selected TX power.
public struct LESetExtendedAdvertisingParametersCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetExtendedAdvertisingParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 2)
    public static var fields: [HCIField<Self>] {
        [.field(\.handle), .field(\.properties), .field(\.intervalMin, .u24), .field(\.intervalMax, .u24), .field(\.channelMap),
         .field(\.ownAddressType), .field(\.peerAddressType), .field(\.peerAddress), .field(\.filterPolicy), .field(\.txPower),
         .field(\.primaryPHY), .field(\.secondaryMaxSkip), .field(\.secondaryPHY), .field(\.sid), .field(\.scanRequestNotification)]
    }

    public var handle: UInt8 = 0
    public var properties = LEAdvertisingEventProperties()
    public var intervalMin: UInt32 = 0
    public var intervalMax: UInt32 = 0
    public var channelMap: UInt8 = 0
    public var ownAddressType = AddressType.publicDevice
    public var peerAddressType = AddressType.publicDevice
    public var peerAddress = BluetoothAddress(rawValue: 0)
    public var filterPolicy = AdvertisingFilterPolicy.acceptAll
    /// dBm; 127 = no preference.
    public var txPower: Int8 = 0
    public var primaryPHY = LEPhy.none
    public var secondaryMaxSkip: UInt8 = 0
    public var secondaryPHY = LEPhy.none
    public var sid: UInt8 = 0
    public var scanRequestNotification = false

    public init() {}

    public init(handle: UInt8 = 0, properties: LEAdvertisingEventProperties, intervalMin: UInt32, intervalMax: UInt32,
                channelMap: UInt8 = 0x07, ownAddressType: AddressType = .publicDevice,
                peerAddressType: AddressType = .publicDevice, peerAddress: BluetoothAddress = BluetoothAddress(rawValue: 0),
                filterPolicy: AdvertisingFilterPolicy = .acceptAll, txPower: Int8 = 127, primaryPHY: LEPhy = .le1M,
                secondaryMaxSkip: UInt8 = 0, secondaryPHY: LEPhy = .le1M, sid: UInt8 = 0, scanRequestNotification: Bool = false) {
        self.handle = handle
        self.properties = properties
        self.intervalMin = intervalMin & 0xFF_FFFF
        self.intervalMax = intervalMax & 0xFF_FFFF
        self.channelMap = channelMap
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.filterPolicy = filterPolicy
        self.txPower = txPower
        self.primaryPHY = primaryPHY
        self.secondaryMaxSkip = secondaryMaxSkip
        self.secondaryPHY = secondaryPHY
        self.sid = sid
        self.scanRequestNotification = scanRequestNotification
    }
}

/// Extended: LE Set Extended Advertising Data (one fragment, at most 251 bytes).
public struct LESetExtendedAdvertisingDataCommand: LEExtendedDataFragmentCommand {
    public static let opcode = Opcode.leSetExtendedAdvertisingData

    public struct Operation: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let intermediate = Operation(rawValue: 0x00)
        public static let first = Operation(rawValue: 0x01)
        public static let last = Operation(rawValue: 0x02)
        public static let complete = Operation(rawValue: 0x03)
        public static let unchanged = Operation(rawValue: 0x04)
    }

    public var handle: UInt8 = 0
    public var operation = Operation.complete
    /// 0x00 the controller may fragment, 0x01 it should not.
    public var fragmentPreference: UInt8 = 0x01
    /// At most 251 bytes; longer data is cut when encoded.
    public var data: [UInt8] = []
    public init() {}
}

/// Extended: LE Set Advertising Set Random Address, the random address one set advertises from.
public struct LESetAdvertisingSetRandomAddressCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetAdvertisingSetRandomAddress
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.handle), .field(\.address)] }
    public var handle: UInt8 = 0
    public var address = BluetoothAddress(rawValue: 0)
    public init() {}
    public init(handle: UInt8, address: BluetoothAddress) {
        self.handle = handle
        self.address = address
    }
}

/// Extended: LE Set Extended Advertising Enable, for a list of advertising sets.
public struct LESetExtendedAdvertisingEnableCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetExtendedAdvertisingEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.enable), .field(\.sets, .list(maximum: 63))] }

    public struct AdvertisingSet: Hashable, Sendable, HCIFieldLayout {
        public static var fields: [HCIField<Self>] { [.field(\.handle), .field(\.duration), .field(\.maxEvents)] }
        public var handle: UInt8 = 0
        /// 10 ms units; 0 = until disabled.
        public var duration: UInt16 = 0
        /// 0 = no limit.
        public var maxEvents: UInt8 = 0
        public init() {}
        public init(handle: UInt8, duration: UInt16 = 0, maxEvents: UInt8 = 0) {
            self.handle = handle
            self.duration = duration
            self.maxEvents = maxEvents
        }
    }

    public var enable = false
    /// Empty with `enable == false` disables every set.
    public var sets: [AdvertisingSet] = []

    public init() {}

    public init(enable: Bool, sets: [AdvertisingSet]) {
        self.enable = enable
        self.sets = sets
    }
}
