// Scan response data for the door beacon, in both command families. Added beside
// Commands+LEAdvertising.swift: a scannable beacon answers SCAN_REQ with this data.

/// Legacy: LE Set Scan Response Data: always 1 length byte + 31 bytes, zero padded.
public struct LESetScanResponseDataCommand: HCICommand {
    public static let opcode = Opcode.leSetScanResponseData
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

/// Extended: LE Set Extended Scan Response Data (one fragment, at most 251 bytes; a set
/// with legacy PDU properties takes at most 31).
public struct LESetExtendedScanResponseDataCommand: LEExtendedDataFragmentCommand {
    public static let opcode = Opcode.leSetExtendedScanResponseData
    public static let expectedResponse = HCIExpectedResponse.commandComplete(returnParametersLength: 1)
    public static let maximumFragmentLength = 251
    public typealias Operation = LESetExtendedAdvertisingDataCommand.Operation

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
