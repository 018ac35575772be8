/// One advertising report, legacy or extended, in one shape so the layers above
/// never care which family the controller speaks.
///
/// `data` is a slice of the event packet's bytes: decoding copies nothing per report.
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
    /// Fixed bytes per legacy report besides its data: type, address type, address,
    /// data length, RSSI.
    static let legacyFixedLength = 10
    /// Fixed bytes per extended report besides its data.
    static let extendedFixedLength = 24

    /// Decodes the reports of an LE Advertising Report subevent (the bytes after the
    /// subevent code). Reports are laid out one after another, as controllers send them.
    public static func decodeLegacyReports(_ parameters: ArraySlice<UInt8>) throws(HCIDecodingError) -> [LEAdvertisingReport] {
        var reports = [LEAdvertisingReport]()
        try forEachLegacyReport(parameters) { reports.append($0) }
        return reports
    }

    /// Decodes the reports of an LE Extended Advertising Report subevent.
    public static func decodeExtendedReports(_ parameters: ArraySlice<UInt8>) throws(HCIDecodingError) -> [LEAdvertisingReport] {
        var reports = [LEAdvertisingReport]()
        try forEachExtendedReport(parameters) { reports.append($0) }
        return reports
    }

    /// Calls `body` for each legacy report without building an array. The whole event
    /// is validated first, so `body` never sees reports of a malformed event.
    public static func forEachLegacyReport(
        _ parameters: ArraySlice<UInt8>, _ body: (LEAdvertisingReport) -> Void
    ) throws(HCIDecodingError) {
        let context = HCIDecodingError.Context.leSubevent(.advertisingReport)
        var reader = HCIByteReader(parameters, context: context)
        let count = Int(try reader.u8())
        // Each report needs at least its fixed part: reject impossible counts before looping.
        guard count >= 1, count * legacyFixedLength <= reader.remaining else {
            throw .countDoesNotFit(context, count: count)
        }
        try validate(parameters, count: count, context: context, fixedLength: legacyFixedLength, lengthOffset: 8,
                     checksLegacyEventType: true)
        for _ in 0 ..< count {
            let eventType = LegacyEventType(rawValue: try reader.u8())
            guard let properties = eventType.properties else {
                throw .invalidValue(context, field: .legacyEventType, value: Int(eventType.rawValue))
            }
            let addressType = AddressType(rawValue: try reader.u8())
            let address = try reader.address()
            let length = Int(try reader.u8())
            let data = try reader.slice(length)
            let rssi = try reader.i8()
            body(LEAdvertisingReport(
                properties: properties, addressType: addressType, address: address,
                rssi: rssi == notAvailable ? nil : rssi, data: data
            ))
        }
    }

    /// Calls `body` for each extended report without building an array (see
    /// `forEachLegacyReport`).
    public static func forEachExtendedReport(
        _ parameters: ArraySlice<UInt8>, _ body: (LEAdvertisingReport) -> Void
    ) throws(HCIDecodingError) {
        let context = HCIDecodingError.Context.leSubevent(.extendedAdvertisingReport)
        var reader = HCIByteReader(parameters, context: context)
        let count = Int(try reader.u8())
        guard count >= 1, count * extendedFixedLength <= reader.remaining else {
            throw .countDoesNotFit(context, count: count)
        }
        try validate(parameters, count: count, context: context, fixedLength: extendedFixedLength, lengthOffset: 23)
        for _ in 0 ..< count {
            let eventType = try reader.u16()
            let addressType = AddressType(rawValue: try reader.u8())
            let address = try reader.address()
            let primaryPHY = LEPhy(rawValue: try reader.u8())
            let secondaryPHY = LEPhy(rawValue: try reader.u8())
            let sid = try reader.u8()
            let txPower = try reader.i8()
            let rssi = try reader.i8()
            let interval = try reader.u16()
            let directAddressType = AddressType(rawValue: try reader.u8())
            let directAddress = try reader.address()
            let length = Int(try reader.u8())
            let data = try reader.slice(length)
            let properties = Properties(rawValue: eventType & ~Properties.dataStatusMask)
            let isDirected = properties.contains(.directed)
            body(LEAdvertisingReport(
                properties: properties,
                dataStatus: DataStatus(rawValue: UInt8(truncatingIfNeeded: (eventType & Properties.dataStatusMask) >> 5)),
                addressType: addressType, address: address, primaryPHY: primaryPHY, secondaryPHY: secondaryPHY,
                sid: sid == noSID ? nil : sid, txPower: txPower == notAvailable ? nil : txPower,
                rssi: rssi == notAvailable ? nil : rssi, periodicAdvertisingInterval: interval,
                directAddressType: isDirected ? directAddressType : nil, directAddress: isDirected ? directAddress : nil,
                data: data
            ))
        }
    }

    /// Walks the data lengths once so that a bad event is rejected whole: the reports
    /// must end exactly at the end of the parameters. Legacy event types are checked in
    /// the same walk, so that `body` is never called for the reports before a bad one;
    /// the error is the one the decoding loop would throw (lengths first, then the first
    /// reserved event type).
    private static func validate(
        _ parameters: ArraySlice<UInt8>, count: Int, context: HCIDecodingError.Context, fixedLength: Int, lengthOffset: Int,
        checksLegacyEventType: Bool = false
    ) throws(HCIDecodingError) {
        var index = parameters.startIndex + 1
        let end = parameters.endIndex
        var reservedEventType: UInt8?
        for report in 0 ..< count {
            guard end - index >= fixedLength else { throw .dataRunsPastEnd(context, report: report) }
            let length = Int(parameters[index + lengthOffset])
            guard end - index - fixedLength >= length else { throw .dataRunsPastEnd(context, report: report) }
            if checksLegacyEventType, reservedEventType == nil,
               LegacyEventType(rawValue: parameters[index]).properties == nil {
                reservedEventType = parameters[index]
            }
            index += fixedLength + length
        }
        guard index == end else { throw .trailingBytes(context, count: end - index) }
        if let reservedEventType {
            throw .invalidValue(context, field: .legacyEventType, value: Int(reservedEventType))
        }
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
