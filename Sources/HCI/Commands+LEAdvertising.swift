// Advertising (the gateway as the door's beacon), in both command families.

/// Legacy: LE Set Advertising Parameters. Intervals in 0.625 ms units.
public struct LESetAdvertisingParametersCommand: HCICommand {
    public static let opcode = Opcode.leSetAdvertisingParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var type: LegacyAdvertisingType
    public var ownAddressType: AddressType
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var channelMap: UInt8
    public var filterPolicy: AdvertisingFilterPolicy

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

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE(intervalMin)
        bytes.appendLE(intervalMax)
        bytes.append(type.rawValue)
        bytes.append(ownAddressType.rawValue)
        bytes.append(peerAddressType.rawValue)
        bytes.appendAddress(peerAddress)
        bytes.append(channelMap)
        bytes.append(filterPolicy.rawValue)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        intervalMin = try reader.u16()
        intervalMax = try reader.u16()
        type = LegacyAdvertisingType(rawValue: try reader.u8())
        ownAddressType = AddressType(rawValue: try reader.u8())
        peerAddressType = AddressType(rawValue: try reader.u8())
        peerAddress = try reader.address()
        channelMap = try reader.u8()
        filterPolicy = AdvertisingFilterPolicy(rawValue: try reader.u8())
        try reader.requireEnd()
    }
}

/// Legacy: LE Set Advertising Data: always 1 length byte + 31 bytes, zero padded.
public struct LESetAdvertisingDataCommand: HCICommand {
    public static let opcode = Opcode.leSetAdvertisingData
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static let maximumLength = 31
    /// At most 31 bytes; longer data is cut when encoded.
    public var data: [UInt8]

    public init(data: [UInt8]) { self.data = data }

    public func encodeParameters(into bytes: inout [UInt8]) {
        let used = data.prefix(Self.maximumLength)
        bytes.append(UInt8(used.count))
        bytes.append(contentsOf: used)
        bytes.append(contentsOf: repeatElement(0, count: Self.maximumLength - used.count))
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        let length = Int(try reader.u8())
        guard length <= Self.maximumLength else {
            throw .invalidValue(reader.context, field: .dataLength, value: length)
        }
        let padded = try reader.slice(Self.maximumLength)
        data = Array(padded.prefix(length))
        try reader.requireEnd()
    }
}

/// Legacy: LE Set Advertising Enable.
public struct LESetAdvertisingEnableCommand: HCICommand {
    public static let opcode = Opcode.leSetAdvertisingEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var enable: Bool
    public init(enable: Bool) { self.enable = enable }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.append(enable ? 1 : 0) }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        enable = try reader.u8() != 0
        try reader.requireEnd()
    }
}

/// Extended: LE Set Extended Advertising Parameters (v1). Intervals are 24-bit, in
/// 0.625 ms units. Returns the selected TX power.
public struct LESetExtendedAdvertisingParametersCommand: HCICommand {
    public static let opcode = Opcode.leSetExtendedAdvertisingParameters
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 2)
    public var handle: UInt8
    public var properties: LEAdvertisingEventProperties
    public var intervalMin: UInt32
    public var intervalMax: UInt32
    public var channelMap: UInt8
    public var ownAddressType: AddressType
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var filterPolicy: AdvertisingFilterPolicy
    /// dBm; 127 = no preference.
    public var txPower: Int8
    public var primaryPHY: LEPhy
    public var secondaryMaxSkip: UInt8
    public var secondaryPHY: LEPhy
    public var sid: UInt8
    public var scanRequestNotification: Bool

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

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(handle)
        bytes.appendLE(properties.rawValue)
        bytes.appendLE24(intervalMin)
        bytes.appendLE24(intervalMax)
        bytes.append(channelMap)
        bytes.append(ownAddressType.rawValue)
        bytes.append(peerAddressType.rawValue)
        bytes.appendAddress(peerAddress)
        bytes.append(filterPolicy.rawValue)
        bytes.append(UInt8(bitPattern: txPower))
        bytes.append(primaryPHY.rawValue)
        bytes.append(secondaryMaxSkip)
        bytes.append(secondaryPHY.rawValue)
        bytes.append(sid)
        bytes.append(scanRequestNotification ? 1 : 0)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        handle = try reader.u8()
        properties = LEAdvertisingEventProperties(rawValue: try reader.u16())
        intervalMin = try reader.u24()
        intervalMax = try reader.u24()
        channelMap = try reader.u8()
        ownAddressType = AddressType(rawValue: try reader.u8())
        peerAddressType = AddressType(rawValue: try reader.u8())
        peerAddress = try reader.address()
        filterPolicy = AdvertisingFilterPolicy(rawValue: try reader.u8())
        txPower = try reader.i8()
        primaryPHY = LEPhy(rawValue: try reader.u8())
        secondaryMaxSkip = try reader.u8()
        secondaryPHY = LEPhy(rawValue: try reader.u8())
        sid = try reader.u8()
        scanRequestNotification = try reader.u8() != 0
        try reader.requireEnd()
    }
}

/// Extended: LE Set Extended Advertising Data (one fragment, at most 251 bytes).
public struct LESetExtendedAdvertisingDataCommand: LEExtendedDataFragmentCommand {
    public static let opcode = Opcode.leSetExtendedAdvertisingData
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static let maximumFragmentLength = 251

    public struct Operation: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let intermediate = Operation(rawValue: 0x00)
        public static let first = Operation(rawValue: 0x01)
        public static let last = Operation(rawValue: 0x02)
        public static let complete = Operation(rawValue: 0x03)
        public static let unchanged = Operation(rawValue: 0x04)
    }

    public var handle: UInt8
    public var operation: Operation
    /// 0x00 the controller may fragment, 0x01 it should not.
    public var fragmentPreference: UInt8
    /// At most 251 bytes; longer data is cut when encoded.
    public var data: [UInt8]

    public init(handle: UInt8 = 0, operation: Operation = .complete, fragmentPreference: UInt8 = 0x01, data: [UInt8]) {
        self.handle = handle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }
}

/// Extended: LE Set Extended Advertising Enable, for a list of advertising sets.
public struct LESetExtendedAdvertisingEnableCommand: HCICommand {
    public static let opcode = Opcode.leSetExtendedAdvertisingEnable
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)

    public struct AdvertisingSet: Hashable, Sendable {
        public var handle: UInt8
        /// 10 ms units; 0 = until disabled.
        public var duration: UInt16
        /// 0 = no limit.
        public var maxEvents: UInt8
        public init(handle: UInt8, duration: UInt16 = 0, maxEvents: UInt8 = 0) {
            self.handle = handle
            self.duration = duration
            self.maxEvents = maxEvents
        }
    }

    public var enable: Bool
    /// Empty with `enable == false` disables every set.
    public var sets: [AdvertisingSet]

    public init(enable: Bool, sets: [AdvertisingSet]) {
        self.enable = enable
        self.sets = sets
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        let used = sets.prefix(63)
        bytes.append(enable ? 1 : 0)
        bytes.append(UInt8(used.count))
        for set in used {
            bytes.append(set.handle)
            bytes.appendLE(set.duration)
            bytes.append(set.maxEvents)
        }
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        enable = try reader.u8() != 0
        let count = Int(try reader.u8())
        guard count * 4 == reader.remaining else { throw .countDoesNotFit(reader.context, count: count) }
        var sets = [AdvertisingSet]()
        sets.reserveCapacity(count)
        for _ in 0 ..< count {
            sets.append(AdvertisingSet(handle: try reader.u8(), duration: try reader.u16(), maxEvents: try reader.u8()))
        }
        self.sets = sets
    }
}
