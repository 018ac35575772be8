// Scan response data for the door beacon, in both command families. Added beside
// Commands+LEAdvertising.swift: a scannable beacon answers SCAN_REQ with this data.

/// Legacy: LE Set Scan Response Data: always 1 length byte + 31 bytes, zero padded.
public struct LESetScanResponseDataCommand: LELegacyDataCommand {
    public static let opcode = Opcode.leSetScanResponseData
    /// At most 31 bytes; longer data is cut when encoded.
    public var data: [UInt8] = []
    public init() {}
}

/// Extended: LE Set Extended Scan Response Data (one fragment, at most 251 bytes; a set
/// with legacy PDU properties takes at most 31).
public struct LESetExtendedScanResponseDataCommand: LEExtendedDataFragmentCommand {
    public static let opcode = Opcode.leSetExtendedScanResponseData
    public typealias Operation = LESetExtendedAdvertisingDataCommand.Operation

    public var handle: UInt8 = 0
    public var operation = Operation.complete
    /// 0x00 the controller may fragment, 0x01 it should not.
    public var fragmentPreference: UInt8 = 0x01
    /// At most 251 bytes; longer data is cut when encoded.
    public var data: [UInt8] = []
    public init() {}
}
