// LE controller set-up and Filter Accept List commands.

public struct LESetEventMaskCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetEventMask
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.mask)] }
    public var mask = LEEventMask(rawValue: 0)
    public init() {}
    public init(mask: LEEventMask) { self.mask = mask }
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

public struct LESetRandomAddressCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.leSetRandomAddress
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.address)] }
    public var address = BluetoothAddress(rawValue: 0)
    public init() {}
    public init(address: BluetoothAddress) { self.address = address }
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

/// LE Add Device To / Remove Device From Filter Accept List: one entry, the same
/// parameters under two opcodes.
public protocol LEFilterAcceptListEntryCommand: HCICommand, HCIFieldLayout {
    var addressType: AddressType { get set }
    var address: BluetoothAddress { get set }
}

extension LEFilterAcceptListEntryCommand {
    public static var expectedResponse: HCIExpectedResponse { .commandComplete(returnParametersLength: 1) }
    public static var fields: [HCIField<Self>] { [.field(\.addressType), .field(\.address)] }

    public init(addressType: AddressType, address: BluetoothAddress) {
        self.init()
        self.addressType = addressType
        self.address = address
    }
}

public struct LEAddDeviceToFilterAcceptListCommand: LEFilterAcceptListEntryCommand {
    public static let opcode = Opcode.leAddDeviceToFilterAcceptList
    public var addressType = AddressType.publicDevice
    public var address = BluetoothAddress(rawValue: 0)
    public init() {}
}

public struct LERemoveDeviceFromFilterAcceptListCommand: LEFilterAcceptListEntryCommand {
    public static let opcode = Opcode.leRemoveDeviceFromFilterAcceptList
    public var addressType = AddressType.publicDevice
    public var address = BluetoothAddress(rawValue: 0)
    public init() {}
}
