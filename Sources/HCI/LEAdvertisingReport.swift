/// One advertising report, legacy or extended, in one shape so the layers above
/// never care which family the controller speaks.
///
/// A report that owns its data, for what outlives the event it came in (decoded
/// events, reports joined from fragments, actions of the host); the hot path reads
/// `LEAdvertisingReportView`s in place instead. Decoded from an event, `data` is a slice
/// of the packet's bytes: decoding copies nothing per report.
public struct LEAdvertisingReport: Hashable, Sendable {
    /// The extended report's Event_Type bits; legacy event types map onto them as the
    /// Core spec's table for legacy PDUs in extended reports does.
    public struct Properties: OptionSet, Hashable, Sendable {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let connectable = Properties(rawValue: 1 << 0)
        public static let scannable = Properties(rawValue: 1 << 1)
        public static let directed = Properties(rawValue: 1 << 2)
        public static let scanResponse = Properties(rawValue: 1 << 3)
        public static let legacy = Properties(rawValue: 1 << 4)
        /// Bits 5–6 hold the data status, kept apart in `dataStatus`.
        static let dataStatusMask: UInt16 = 0b11 << 5
    }

    /// Whether `data` is all of the advertiser's data.
    public struct DataStatus: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let complete = DataStatus(rawValue: 0)
        /// More fragments follow in later reports.
        public static let incompleteMoreToCome = DataStatus(rawValue: 1)
        /// The controller gave up; no more fragments come.
        public static let incompleteTruncated = DataStatus(rawValue: 2)
    }

    /// The legacy report's Event_Type values (advertising PDU types).
    public struct LegacyEventType: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let advInd = LegacyEventType(rawValue: 0x00)
        public static let advDirectInd = LegacyEventType(rawValue: 0x01)
        public static let advScanInd = LegacyEventType(rawValue: 0x02)
        public static let advNonconnInd = LegacyEventType(rawValue: 0x03)
        public static let scanRsp = LegacyEventType(rawValue: 0x04)

        /// The equivalent extended properties, `nil` for reserved values.
        public var properties: Properties? {
            switch self {
            case .advInd: [.legacy, .connectable, .scannable]
            case .advDirectInd: [.legacy, .connectable, .directed]
            case .advScanInd: [.legacy, .scannable]
            case .advNonconnInd: [.legacy]
            case .scanRsp: [.legacy, .scannable, .scanResponse]
            default: nil
            }
        }

        /// The legacy event type for properties (inverse of `properties`).
        public init(_ properties: Properties) {
            if properties.contains(.scanResponse) { self = .scanRsp }
            else if properties.contains(.directed) { self = .advDirectInd }
            else if properties.contains(.connectable) { self = .advInd }
            else if properties.contains(.scannable) { self = .advScanInd }
            else { self = .advNonconnInd }
        }
    }

    public var properties: Properties
    public var dataStatus: DataStatus
    public var addressType: AddressType
    public var address: BluetoothAddress
    public var primaryPHY: LEPhy
    /// `.none` when nothing was sent on a secondary channel (always for legacy PDUs).
    public var secondaryPHY: LEPhy
    /// Advertising SID; `nil` when none was given (0xFF).
    public var sid: UInt8?
    /// dBm; `nil` when not available (127).
    public var txPower: Int8?
    /// dBm; `nil` when not available (127).
    public var rssi: Int8?
    /// 1.25 ms units; 0 = no periodic advertising.
    public var periodicAdvertisingInterval: UInt16
    public var directAddressType: AddressType?
    public var directAddress: BluetoothAddress?
    public var data: ArraySlice<UInt8>

    public init(properties: Properties, dataStatus: DataStatus = .complete, addressType: AddressType,
                address: BluetoothAddress, primaryPHY: LEPhy = .le1M, secondaryPHY: LEPhy = .none,
                sid: UInt8? = nil, txPower: Int8? = nil, rssi: Int8?, periodicAdvertisingInterval: UInt16 = 0,
                directAddressType: AddressType? = nil, directAddress: BluetoothAddress? = nil,
                data: ArraySlice<UInt8>) {
        self.properties = properties
        self.dataStatus = dataStatus
        self.addressType = addressType
        self.address = address
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.sid = sid
        self.txPower = txPower
        self.rssi = rssi
        self.periodicAdvertisingInterval = periodicAdvertisingInterval
        self.directAddressType = directAddressType
        self.directAddress = directAddress
        self.data = data
    }

    public var isConnectable: Bool { properties.contains(.connectable) }
    public var isScanResponse: Bool { properties.contains(.scanResponse) }
    public var isLegacy: Bool { properties.contains(.legacy) }

    /// The value the spec uses for "not available" in the RSSI and TX power fields.
    static let notAvailable: Int8 = 127
    static let noSID: UInt8 = 0xFF
}

// MARK: - Decoding

extension LEAdvertisingReport {
    /// The reports of an LE Advertising Report or LE Extended Advertising Report subevent
    /// (the bytes after the subevent code), as values: read by `LEAdvertisingReportView`,
    /// the one reader of the two layouts, with the errors of its `validate`. Each report's
    /// `data` is a slice of `parameters`, not a copy. `[]` for another subevent.
    public static func decodeReports(
        subevent: LESubeventCode, parameters: ArraySlice<UInt8>
    ) throws(HCIDecodingError) -> [LEAdvertisingReport] {
        let decoded = parameters.withUnsafeBufferPointer { bytes -> Result<[LEAdvertisingReport], HCIDecodingError> in
            do throws(HCIDecodingError) {
                guard let summary = try LEAdvertisingReportView.validate(subevent: subevent, parameters: bytes),
                      let base = bytes.baseAddress
                else { return .success([]) }
                var reports = [LEAdvertisingReport]()
                reports.reserveCapacity(summary.count)
                LEAdvertisingReportView.forEach(subevent: subevent, parameters: bytes) { view in
                    // The view's data lies within `bytes`: the same range of `parameters`.
                    let start = parameters.startIndex + (view.data.baseAddress.map { $0 - base } ?? 0)
                    reports.append(view.makeReport(data: parameters[start ..< start + view.data.count]))
                }
                return .success(reports)
            } catch {
                return .failure(error)
            }
        }
        return try decoded.get()
    }
}

// MARK: - Encoding

extension LEAdvertisingReport {
    /// Appends this report in the legacy layout (extended-only fields are dropped).
    public func encodeLegacy(into bytes: inout [UInt8]) {
        let used = data.prefix(31)
        bytes.append(LegacyEventType(properties).rawValue)
        bytes.append(addressType.rawValue)
        bytes.appendAddress(address)
        bytes.append(UInt8(used.count))
        bytes.append(contentsOf: used)
        bytes.append(UInt8(bitPattern: rssi ?? Self.notAvailable))
    }

    /// Appends this report in the extended layout (data cut to 229 bytes, the most one
    /// event can carry).
    public func encodeExtended(into bytes: inout [UInt8]) {
        let used = data.prefix(229)
        bytes.appendLE(properties.rawValue & ~Properties.dataStatusMask | UInt16(dataStatus.rawValue & 0b11) << 5)
        bytes.append(addressType.rawValue)
        bytes.appendAddress(address)
        bytes.append(primaryPHY.rawValue)
        bytes.append(secondaryPHY.rawValue)
        bytes.append(sid ?? Self.noSID)
        bytes.append(UInt8(bitPattern: txPower ?? Self.notAvailable))
        bytes.append(UInt8(bitPattern: rssi ?? Self.notAvailable))
        bytes.appendLE(periodicAdvertisingInterval)
        bytes.append(directAddressType?.rawValue ?? 0)
        bytes.appendAddress(directAddress ?? BluetoothAddress(rawValue: 0))
        bytes.append(UInt8(used.count))
        bytes.append(contentsOf: used)
    }
}
