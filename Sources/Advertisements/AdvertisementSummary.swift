/// Everything this gateway understands in one report's advertising data.
///
/// Building it allocates (names, lists), so it is made only for display (`scan`) or when
/// an advertiser's data changed, never for every report.
public struct AdvertisementSummary: Hashable, Sendable {
    public var flags: UInt8?
    /// Service UUIDs from all the 16/32/128-bit lists, complete or not, in order.
    public var serviceUUIDs: [BluetoothUUID] = []
    public var localName: String?
    public var localNameIsComplete = false
    public var txPowerLevel: Int8?
    public var appearance: UInt16?
    public var serviceData: [ServiceData] = []
    public var manufacturerData: [ManufacturerData] = []
    public var iBeacon: IBeacon?
    public var eddystone: [EddystoneFrame] = []
    public var malformations: ADMalformations = []

    public struct ServiceData: Hashable, Sendable {
        public var uuid: BluetoothUUID
        public var data: [UInt8]
    }

    public struct ManufacturerData: Hashable, Sendable {
        public var company: CompanyIdentifier
        /// The bytes after the company id.
        public var data: [UInt8]
    }

    public init() {}

    public init(parsing bytes: [UInt8]) { self.init(parsing: bytes[...]) }

    public init(parsing bytes: ArraySlice<UInt8>) {
        var iterator = AdvertisingData(bytes).makeIterator()
        while let structure = iterator.next() {
            decode(structure)
        }
        malformations.formUnion(iterator.malformations)
    }

    private mutating func decode(_ structure: ADStructure) {
        let value = structure.value
        guard ADStructure.lengthIsValid(type: structure.type, count: value.count) else {
            malformations.insert(.invalidFieldLength)
            return
        }
        switch structure.type {
        case .flags:
            flags = value.first
        case .incompleteServiceUUIDs16, .completeServiceUUIDs16:
            var offset = 0
            while let uuid = value.uint16LE(at: offset) {
                serviceUUIDs.append(.uuid16(uuid))
                offset += 2
            }
        case .incompleteServiceUUIDs32, .completeServiceUUIDs32:
            var offset = 0
            while let low = value.uint16LE(at: offset), let high = value.uint16LE(at: offset + 2) {
                serviceUUIDs.append(.uuid32(UInt32(high) << 16 | UInt32(low)))
                offset += 4
            }
        case .incompleteServiceUUIDs128, .completeServiceUUIDs128:
            var start = value.startIndex
            while start + 16 <= value.endIndex {
                if let uuid = UUID128(littleEndianBytes: value[start ..< start + 16]) {
                    serviceUUIDs.append(.uuid128(uuid))
                }
                start += 16
            }
        case .shortenedLocalName, .completeLocalName:
            // A complete name wins over a shortened one whatever their order.
            guard localName == nil || !localNameIsComplete else { break }
            localName = Self.displayName(value)
            localNameIsComplete = structure.type == .completeLocalName
        case .txPowerLevel:
            txPowerLevel = value.first.map { Int8(bitPattern: $0) }
        case .appearance:
            appearance = value.uint16LE(at: 0)
        case .serviceData16:
            guard let uuid = value.uint16LE(at: 0) else { break }
            let payload = value.dropFirst(2)
            serviceData.append(ServiceData(uuid: .uuid16(uuid), data: Array(payload)))
            if uuid == 0xFEAA {
                switch EddystoneFrame.decode(serviceData: payload) {
                case let .frame(frame): eddystone.append(frame)
                case .truncated: malformations.insert(.truncatedEddystone)
                }
            }
        case .serviceData32:
            guard let low = value.uint16LE(at: 0), let high = value.uint16LE(at: 2) else { break }
            serviceData.append(ServiceData(uuid: .uuid32(UInt32(high) << 16 | UInt32(low)), data: Array(value.dropFirst(4))))
        case .serviceData128:
            guard let uuid = UUID128(littleEndianBytes: value.prefix(16)) else { break }
            serviceData.append(ServiceData(uuid: .uuid128(uuid), data: Array(value.dropFirst(16))))
        case .manufacturerSpecificData:
            guard let company = value.uint16LE(at: 0) else { break }
            manufacturerData.append(ManufacturerData(company: CompanyIdentifier(rawValue: company), data: Array(value.dropFirst(2))))
            if iBeacon == nil {
                switch IBeacon.decode(manufacturerData: value) {
                case let .iBeacon(beacon): iBeacon = beacon
                case .truncated: malformations.insert(.truncatedIBeacon)
                case .notIBeacon: break
                }
            }
        default:
            break
        }
    }

    /// Names are untrusted bytes: invalid UTF-8 becomes U+FFFD rather than an error, and
    /// the NUL padding some firmwares add is dropped.
    static func displayName(_ bytes: ArraySlice<UInt8>) -> String {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
        return String(decoding: bytes[bytes.startIndex ..< end], as: UTF8.self)
    }

    /// The identity fields `scan` shows.
    public var identity: AdvertisementIdentity {
        var identity = AdvertisementIdentity()
        identity.iBeacon = iBeacon
        for frame in eddystone {
            switch frame {
            case let .uid(uid, _): identity.eddystoneUID = identity.eddystoneUID ?? uid
            case let .url(url, _): identity.eddystoneURL = identity.eddystoneURL ?? url
            case let .tlm(tlm): identity.eddystoneTLM = tlm
            default: break
            }
        }
        identity.name = localName
        identity.serviceUUIDs = serviceUUIDs
        // An iBeacon's manufacturer data is the iBeacon; naming Apple as well would only
        // repeat it (the example in docs/cli.md shows the iBeacon alone).
        identity.manufacturer = manufacturerData.first(where: { data in
            !(iBeacon != nil && data.company == .apple && data.data.first == IBeacon.typeIBeacon)
        })?.company
        return identity
    }
}

/// What `scan` shows to identify an advertiser (`identity` in docs/cli.md), plus the Eddystone
/// URL/telemetry the text table shows.
public struct AdvertisementIdentity: Hashable, Sendable {
    public var iBeacon: IBeacon?
    public var eddystoneUID: EddystoneUID?
    public var name: String?
    public var serviceUUIDs: [BluetoothUUID] = []
    public var manufacturer: CompanyIdentifier?
    public var eddystoneURL: String?
    public var eddystoneTLM: EddystoneTLM?

    public init() {}

    /// Fields present in `newer` replace ours; ours stay where `newer` has none. An
    /// advertiser's name often comes only in scan responses and a beacon rotates its
    /// Eddystone frames, so one report rarely says everything.
    public func merging(_ newer: AdvertisementIdentity) -> AdvertisementIdentity {
        var merged = self
        merged.iBeacon = newer.iBeacon ?? iBeacon
        merged.eddystoneUID = newer.eddystoneUID ?? eddystoneUID
        merged.name = newer.name ?? name
        if !newer.serviceUUIDs.isEmpty { merged.serviceUUIDs = newer.serviceUUIDs }
        merged.manufacturer = newer.manufacturer ?? manufacturer
        merged.eddystoneURL = newer.eddystoneURL ?? eddystoneURL
        merged.eddystoneTLM = newer.eddystoneTLM ?? eddystoneTLM
        return merged
    }
}
