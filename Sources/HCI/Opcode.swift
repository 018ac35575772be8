/// An HCI command opcode: a 6-bit group (OGF) and a 10-bit command (OCF), sent
/// least significant byte first.
public struct Opcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    /// Opcode Group Field.
    public var ogf: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 10) }
    /// Opcode Command Field.
    public var ocf: UInt16 { rawValue & 0x03FF }

    public var description: String {
        "0x" + String(rawValue, radix: 16) + "(ogf 0x" + String(ogf, radix: 16) + ", ocf 0x" + String(ocf, radix: 16) + ")"
    }

    /// Command Complete events carry this when they only hand back command credits.
    public static let noOperation = Opcode(rawValue: 0x0000)

    // Link Control (OGF 0x01)
    public static let disconnect = Opcode(ogf: 0x01, ocf: 0x0006)

    // Controller & Baseband (OGF 0x03)
    public static let setEventMask = Opcode(ogf: 0x03, ocf: 0x0001)
    public static let reset = Opcode(ogf: 0x03, ocf: 0x0003)

    // Informational (OGF 0x04)
    public static let readLocalVersionInformation = Opcode(ogf: 0x04, ocf: 0x0001)
    public static let readLocalSupportedCommands = Opcode(ogf: 0x04, ocf: 0x0002)
    public static let readLocalSupportedFeatures = Opcode(ogf: 0x04, ocf: 0x0003)
    public static let readBufferSize = Opcode(ogf: 0x04, ocf: 0x0005)
    public static let readBDAddr = Opcode(ogf: 0x04, ocf: 0x0009)

    // Status (OGF 0x05)
    public static let readRSSI = Opcode(ogf: 0x05, ocf: 0x0005)

    // LE Controller (OGF 0x08)
    public static let leSetEventMask = Opcode(ogf: 0x08, ocf: 0x0001)
    public static let leReadBufferSize = Opcode(ogf: 0x08, ocf: 0x0002)
    public static let leReadLocalSupportedFeatures = Opcode(ogf: 0x08, ocf: 0x0003)
    public static let leSetRandomAddress = Opcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = Opcode(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = Opcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetScanResponseData = Opcode(ogf: 0x08, ocf: 0x0009)
    public static let leSetAdvertisingEnable = Opcode(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = Opcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = Opcode(ogf: 0x08, ocf: 0x000C)
    public static let leCreateConnection = Opcode(ogf: 0x08, ocf: 0x000D)
    public static let leCreateConnectionCancel = Opcode(ogf: 0x08, ocf: 0x000E)
    public static let leReadFilterAcceptListSize = Opcode(ogf: 0x08, ocf: 0x000F)
    public static let leClearFilterAcceptList = Opcode(ogf: 0x08, ocf: 0x0010)
    public static let leAddDeviceToFilterAcceptList = Opcode(ogf: 0x08, ocf: 0x0011)
    public static let leRemoveDeviceFromFilterAcceptList = Opcode(ogf: 0x08, ocf: 0x0012)
    public static let leConnectionUpdate = Opcode(ogf: 0x08, ocf: 0x0013)
    public static let leLongTermKeyRequestReply = Opcode(ogf: 0x08, ocf: 0x001A)
    public static let leLongTermKeyRequestNegativeReply = Opcode(ogf: 0x08, ocf: 0x001B)
    public static let leReadSupportedStates = Opcode(ogf: 0x08, ocf: 0x001C)
    public static let leSetAdvertisingSetRandomAddress = Opcode(ogf: 0x08, ocf: 0x0035)
    public static let leSetExtendedAdvertisingParameters = Opcode(ogf: 0x08, ocf: 0x0036)
    public static let leSetExtendedAdvertisingData = Opcode(ogf: 0x08, ocf: 0x0037)
    public static let leSetExtendedScanResponseData = Opcode(ogf: 0x08, ocf: 0x0038)
    public static let leSetExtendedAdvertisingEnable = Opcode(ogf: 0x08, ocf: 0x0039)
    public static let leSetExtendedScanParameters = Opcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = Opcode(ogf: 0x08, ocf: 0x0042)
    public static let leExtendedCreateConnection = Opcode(ogf: 0x08, ocf: 0x0043)

    /// Commands of the LE extended advertising/scanning family. A controller rejects
    /// them with "command disallowed" once a legacy one was used since reset (and the
    /// other way round), so the host picks one family after reset and keeps it.
    public var isExtendedFamily: Bool {
        switch self {
        case .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
             .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable,
             .leSetExtendedScanParameters, .leSetExtendedScanEnable, .leExtendedCreateConnection:
            true
        default:
            false
        }
    }

    /// Commands of the legacy advertising/scanning family (see `isExtendedFamily`).
    public var isLegacyFamily: Bool {
        switch self {
        case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData,
             .leSetAdvertisingEnable, .leSetScanParameters, .leSetScanEnable, .leCreateConnection:
            true
        default:
            false
        }
    }
}
