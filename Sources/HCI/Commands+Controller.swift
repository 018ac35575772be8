// Controller & baseband, informational and status commands.

public struct ResetCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.reset
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public init() {}
}

public struct SetEventMaskCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.setEventMask
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static var fields: [HCIField<Self>] { [.field(\.mask)] }
    public var mask = EventMask(rawValue: 0)
    public init() {}
    public init(mask: EventMask) { self.mask = mask }
}

public struct ReadLocalVersionInformationCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.readLocalVersionInformation
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 9)
    public init() {}
}

public struct ReadLocalSupportedCommandsCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.readLocalSupportedCommands
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 65)
    public init() {}
}

public struct ReadLocalSupportedFeaturesCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.readLocalSupportedFeatures
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 9)
    public init() {}
}

public struct ReadBufferSizeCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.readBufferSize
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 8)
    public init() {}
}

public struct ReadBDAddrCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.readBDAddr
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 7)
    public init() {}
}

public struct ReadRSSICommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.readRSSI
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 4)
    public static var fields: [HCIField<Self>] { [.field(\.connectionHandle)] }
    public var connectionHandle: UInt16 = 0
    public init() {}
    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }
}

public struct DisconnectCommand: HCICommand, HCIFieldLayout {
    public static let opcode = Opcode.disconnect
    public static let expectedResponse = HCIExpectedResponse.commandStatus
    public static var fields: [HCIField<Self>] { [.field(\.connectionHandle), .field(\.reason)] }
    public var connectionHandle: UInt16 = 0
    public var reason = HCIStatus.success
    public init() {}
    public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }
}
