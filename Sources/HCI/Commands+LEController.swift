// LE controller set-up and Filter Accept List commands.

public struct LESetEventMaskCommand: HCICommand {
    public static let opcode = Opcode.leSetEventMask
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var mask: LEEventMask
    public init(mask: LEEventMask) { self.mask = mask }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE(mask.rawValue) }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        mask = LEEventMask(rawValue: try reader.u64())
        try reader.requireEnd()
    }
}

public struct LEReadBufferSizeCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leReadBufferSize
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 4)
    public init() {}
}

public struct LEReadLocalSupportedFeaturesCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leReadLocalSupportedFeatures
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 9)
    public init() {}
}

public struct LEReadSupportedStatesCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leReadSupportedStates
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 9)
    public init() {}
}

public struct LESetRandomAddressCommand: HCICommand {
    public static let opcode = Opcode.leSetRandomAddress
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var address: BluetoothAddress
    public init(address: BluetoothAddress) { self.address = address }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendAddress(address) }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        address = try reader.address()
        try reader.requireEnd()
    }
}

public struct LEReadFilterAcceptListSizeCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leReadFilterAcceptListSize
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 2)
    public init() {}
}

public struct LEClearFilterAcceptListCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.leClearFilterAcceptList
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public init() {}
}

public struct LEAddDeviceToFilterAcceptListCommand: HCICommand {
    public static let opcode = Opcode.leAddDeviceToFilterAcceptList
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var addressType: AddressType
    public var address: BluetoothAddress
    public init(addressType: AddressType, address: BluetoothAddress) {
        self.addressType = addressType
        self.address = address
    }
    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(addressType.rawValue)
        bytes.appendAddress(address)
    }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        addressType = AddressType(rawValue: try reader.u8())
        address = try reader.address()
        try reader.requireEnd()
    }
}

public struct LERemoveDeviceFromFilterAcceptListCommand: HCICommand {
    public static let opcode = Opcode.leRemoveDeviceFromFilterAcceptList
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var addressType: AddressType
    public var address: BluetoothAddress
    public init(addressType: AddressType, address: BluetoothAddress) {
        self.addressType = addressType
        self.address = address
    }
    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(addressType.rawValue)
        bytes.appendAddress(address)
    }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        addressType = AddressType(rawValue: try reader.u8())
        address = try reader.address()
        try reader.requireEnd()
    }
}
