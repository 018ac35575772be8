/// The 64-octet Supported_Commands bitmap of Read Local Supported Commands
/// (Core spec Vol 4 Part E §6.27): one bit per command, addressed by octet and bit.
public struct SupportedCommands: Hashable, Sendable {
    public static let octetCount = 64

    /// Exactly 64 octets.
    public private(set) var octets: [UInt8]

    /// Pads or cuts to 64 octets, so any input yields a usable value.
    public init(octets: some Collection<UInt8>) {
        var bytes = Array(octets.prefix(Self.octetCount))
        if bytes.count < Self.octetCount {
            bytes.append(contentsOf: repeatElement(0, count: Self.octetCount - bytes.count))
        }
        self.octets = bytes
    }

    public static let none = SupportedCommands(octets: [])

    /// A command's position in the bitmap.
    public struct Bit: Hashable, Sendable {
        public var octet: Int
        public var bit: Int
        public init(octet: Int, bit: Int) {
            self.octet = octet
            self.bit = bit
        }
    }

    public func contains(octet: Int, bit: Int) -> Bool {
        guard octet >= 0, octet < octets.count, bit >= 0, bit < 8 else { return false }
        return octets[octet] & (1 << UInt8(bit)) != 0
    }

    public func contains(_ bit: Bit) -> Bool { contains(octet: bit.octet, bit: bit.bit) }

    /// Whether the controller lists `opcode`; `nil` for opcodes without a known bit
    /// (Read Local Supported Commands itself, which every controller has).
    public func contains(_ opcode: Opcode) -> Bool? {
        guard let bit = Self.bit(for: opcode) else { return nil }
        return contains(bit)
    }

    public mutating func insert(_ bit: Bit) {
        guard bit.octet >= 0, bit.octet < octets.count, bit.bit >= 0, bit.bit < 8 else { return }
        octets[bit.octet] |= 1 << UInt8(bit.bit)
    }

    public mutating func insert(_ opcode: Opcode) {
        if let bit = Self.bit(for: opcode) { insert(bit) }
    }

    // Named bits for the commands this host uses (octet, bit) from the Core spec table.
    public static let disconnect = Bit(octet: 0, bit: 5)
    public static let setEventMask = Bit(octet: 5, bit: 6)
    public static let reset = Bit(octet: 5, bit: 7)
    public static let readLocalVersionInformation = Bit(octet: 14, bit: 3)
    public static let readLocalSupportedFeatures = Bit(octet: 14, bit: 5)
    public static let readBufferSize = Bit(octet: 14, bit: 7)
    public static let readBDAddr = Bit(octet: 15, bit: 1)
    public static let readRSSI = Bit(octet: 15, bit: 5)
    public static let leSetEventMask = Bit(octet: 25, bit: 0)
    public static let leReadBufferSize = Bit(octet: 25, bit: 1)
    public static let leReadLocalSupportedFeatures = Bit(octet: 25, bit: 2)
    public static let leSetRandomAddress = Bit(octet: 25, bit: 4)
    public static let leSetAdvertisingParameters = Bit(octet: 25, bit: 5)
    public static let leSetAdvertisingData = Bit(octet: 25, bit: 7)
    public static let leSetScanResponseData = Bit(octet: 26, bit: 0)
    public static let leSetAdvertisingEnable = Bit(octet: 26, bit: 1)
    public static let leSetScanParameters = Bit(octet: 26, bit: 2)
    public static let leSetScanEnable = Bit(octet: 26, bit: 3)
    public static let leCreateConnection = Bit(octet: 26, bit: 4)
    public static let leCreateConnectionCancel = Bit(octet: 26, bit: 5)
    public static let leReadFilterAcceptListSize = Bit(octet: 26, bit: 6)
    public static let leClearFilterAcceptList = Bit(octet: 26, bit: 7)
    public static let leAddDeviceToFilterAcceptList = Bit(octet: 27, bit: 0)
    public static let leRemoveDeviceFromFilterAcceptList = Bit(octet: 27, bit: 1)
    public static let leConnectionUpdate = Bit(octet: 27, bit: 2)
    public static let leReadSupportedStates = Bit(octet: 28, bit: 3)
    public static let leSetAdvertisingSetRandomAddress = Bit(octet: 36, bit: 1)
    public static let leSetExtendedAdvertisingParameters = Bit(octet: 36, bit: 2)
    public static let leSetExtendedAdvertisingData = Bit(octet: 36, bit: 3)
    public static let leSetExtendedScanResponseData = Bit(octet: 36, bit: 4)
    public static let leSetExtendedAdvertisingEnable = Bit(octet: 36, bit: 5)
    public static let leSetExtendedScanParameters = Bit(octet: 37, bit: 5)
    public static let leSetExtendedScanEnable = Bit(octet: 37, bit: 6)
    public static let leExtendedCreateConnection = Bit(octet: 37, bit: 7)

    /// The bitmap position of `opcode`, for the opcodes this package knows.
    public static func bit(for opcode: Opcode) -> Bit? {
        switch opcode {
        case .disconnect: disconnect
        case .setEventMask: setEventMask
        case .reset: reset
        case .readLocalVersionInformation: readLocalVersionInformation
        case .readLocalSupportedFeatures: readLocalSupportedFeatures
        case .readBufferSize: readBufferSize
        case .readBDAddr: readBDAddr
        case .readRSSI: readRSSI
        case .leSetEventMask: leSetEventMask
        case .leReadBufferSize: leReadBufferSize
        case .leReadLocalSupportedFeatures: leReadLocalSupportedFeatures
        case .leSetRandomAddress: leSetRandomAddress
        case .leSetAdvertisingParameters: leSetAdvertisingParameters
        case .leSetAdvertisingData: leSetAdvertisingData
        case .leSetScanResponseData: leSetScanResponseData
        case .leSetAdvertisingEnable: leSetAdvertisingEnable
        case .leSetScanParameters: leSetScanParameters
        case .leSetScanEnable: leSetScanEnable
        case .leCreateConnection: leCreateConnection
        case .leCreateConnectionCancel: leCreateConnectionCancel
        case .leReadFilterAcceptListSize: leReadFilterAcceptListSize
        case .leClearFilterAcceptList: leClearFilterAcceptList
        case .leAddDeviceToFilterAcceptList: leAddDeviceToFilterAcceptList
        case .leRemoveDeviceFromFilterAcceptList: leRemoveDeviceFromFilterAcceptList
        case .leConnectionUpdate: leConnectionUpdate
        case .leReadSupportedStates: leReadSupportedStates
        case .leSetAdvertisingSetRandomAddress: leSetAdvertisingSetRandomAddress
        case .leSetExtendedAdvertisingParameters: leSetExtendedAdvertisingParameters
        case .leSetExtendedAdvertisingData: leSetExtendedAdvertisingData
        case .leSetExtendedScanResponseData: leSetExtendedScanResponseData
        case .leSetExtendedAdvertisingEnable: leSetExtendedAdvertisingEnable
        case .leSetExtendedScanParameters: leSetExtendedScanParameters
        case .leSetExtendedScanEnable: leSetExtendedScanEnable
        case .leExtendedCreateConnection: leExtendedCreateConnection
        default: nil
        }
    }

    /// All three extended scan/connect commands the host needs to run the extended family.
    public var hasExtendedScanningAndInitiating: Bool {
        contains(Self.leSetExtendedScanParameters) && contains(Self.leSetExtendedScanEnable)
            && contains(Self.leExtendedCreateConnection)
    }
}
