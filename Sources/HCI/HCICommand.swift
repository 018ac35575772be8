/// How the controller answers a command.
public enum HCIExpectedResponse: Hashable, Sendable {
    /// Command Complete whose return parameters (status first) have this many bytes.
    case commandComplete(returnParametersLength: Int)
    /// Command Status; the outcome comes later in its own event.
    case commandStatus
}

/// One HCI command: an opcode and its parameters, encodable and decodable so that
/// tests (and the fake controllers) can check both directions.
public protocol HCICommand: Sendable, Equatable {
    static var opcode: Opcode { get }
    static var expectedResponse: HCIExpectedResponse { get }
    func encodeParameters(into bytes: inout [UInt8])
    /// Decodes the parameters (without the 3-byte command header).
    init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError)
}

extension HCICommand {
    /// The command packet: opcode, parameter length, parameters.
    public var packet: HCIPacket {
        var bytes = [UInt8]()
        bytes.reserveCapacity(3 + 32)
        bytes.appendLE(Self.opcode.rawValue)
        bytes.append(0)
        encodeParameters(into: &bytes)
        // Every command here encodes well under 255 bytes of parameters.
        bytes[2] = UInt8(truncatingIfNeeded: bytes.count - 3)
        return HCIPacket(type: .command, payload: bytes)
    }

    /// Decodes this command from a whole command packet (for tests and fake controllers).
    public init(packet: HCIPacket) throws(HCIDecodingError) {
        let (opcode, parameters) = try HCICommandPacket.split(packet)
        guard opcode == Self.opcode else { throw .opcodeMismatch(expected: Self.opcode, actual: opcode) }
        try self.init(parameters: parameters)
    }
}

extension HCICommand where Self: HCIFieldLayout {
    public func encodeParameters(into bytes: inout [UInt8]) { encodeFields(into: &bytes) }

    /// Commands decode exactly: extra bytes mean a different command layout.
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        try self.init(decoding: parameters, context: .command(Self.opcode), exact: true)
    }
}

/// Commands without parameters.
public protocol HCIParameterlessCommand: HCICommand {
    init()
}

extension HCIParameterlessCommand {
    public func encodeParameters(into bytes: inout [UInt8]) {}
    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) { self.init() }
}

/// Reading the header of a command packet (the controller side of the link).
public enum HCICommandPacket {
    /// The opcode and parameters of a command packet, checked against its length byte.
    public static func split(_ packet: HCIPacket) throws(HCIDecodingError) -> (Opcode, ArraySlice<UInt8>) {
        guard packet.type == .command else { throw .wrongPacketType(packet.type) }
        let payload = packet.payload
        guard payload.count >= 3 else { throw .truncated(.packetHeader, needed: 3, available: payload.count) }
        let opcode = Opcode(rawValue: UInt16(payload[0]) | UInt16(payload[1]) << 8)
        let declared = Int(payload[2])
        guard declared == payload.count - 3 else {
            throw .lengthMismatch(.command(opcode), declared: declared, actual: payload.count - 3)
        }
        return (opcode, payload[3...])
    }
}

extension Opcode {
    /// How the controller answers each command this package implements; `nil` for others.
    ///
    /// A transport that stands in for a controller (btsnoop replay) answers with a
    /// Command Complete of this many zero bytes (status success) or a success Command Status.
    public var expectedResponse: HCIExpectedResponse? {
        switch self {
        case .reset, .setEventMask, .leSetEventMask, .leSetRandomAddress,
             .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData,
             .leSetAdvertisingEnable, .leSetScanParameters, .leSetScanEnable,
             .leCreateConnectionCancel, .leClearFilterAcceptList, .leAddDeviceToFilterAcceptList,
             .leRemoveDeviceFromFilterAcceptList, .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingData,
             .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable,
             .leSetExtendedScanParameters, .leSetExtendedScanEnable:
            .commandComplete(returnParametersLength: 1)
        case .readLocalVersionInformation: .commandComplete(returnParametersLength: 9)
        case .readLocalSupportedCommands: .commandComplete(returnParametersLength: 65)
        case .readLocalSupportedFeatures: .commandComplete(returnParametersLength: 9)
        case .readBufferSize: .commandComplete(returnParametersLength: 8)
        case .readBDAddr: .commandComplete(returnParametersLength: 7)
        case .readRSSI: .commandComplete(returnParametersLength: 4)
        case .leLongTermKeyRequestReply, .leLongTermKeyRequestNegativeReply: .commandComplete(returnParametersLength: 3)
        case .leReadBufferSize: .commandComplete(returnParametersLength: 4)
        case .leReadLocalSupportedFeatures: .commandComplete(returnParametersLength: 9)
        case .leReadFilterAcceptListSize: .commandComplete(returnParametersLength: 2)
        case .leReadSupportedStates: .commandComplete(returnParametersLength: 9)
        case .leSetExtendedAdvertisingParameters: .commandComplete(returnParametersLength: 2)
        case .disconnect, .leCreateConnection, .leExtendedCreateConnection, .leConnectionUpdate:
            .commandStatus
        default: nil
        }
    }

    /// The length of the return parameters of a Command Complete for this opcode;
    /// `nil` for commands answered by Command Status or not implemented here.
    public var returnParametersLength: Int? {
        if case .commandComplete(let length) = expectedResponse { return length }
        return nil
    }
}
