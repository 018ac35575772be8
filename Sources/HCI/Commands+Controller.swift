// Controller & baseband, informational and status commands.

public struct ResetCommand: HCIParameterlessCommand {
    public static let opcode = Opcode.reset
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public init() {}
}

public struct SetEventMaskCommand: HCICommand {
    public static let opcode = Opcode.setEventMask
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public var mask: EventMask
    public init(mask: EventMask) { self.mask = mask }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE(mask.rawValue) }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        mask = EventMask(rawValue: try reader.u64())
        try reader.requireEnd()
    }
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

public struct ReadRSSICommand: HCICommand {
    public static let opcode = Opcode.readRSSI
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 4)
    public var connectionHandle: UInt16
    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE(connectionHandle) }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        connectionHandle = try reader.u16()
        try reader.requireEnd()
    }
}

public struct DisconnectCommand: HCICommand {
    public static let opcode = Opcode.disconnect
    public static let expectedResponse = HCIExpectedResponse.commandStatus
    public var connectionHandle: UInt16
    public var reason: HCIStatus
    public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }
    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE(connectionHandle)
        bytes.append(reason.rawValue)
    }
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        connectionHandle = try reader.u16()
        reason = HCIStatus(rawValue: try reader.u8())
        try reader.requireEnd()
    }
}
