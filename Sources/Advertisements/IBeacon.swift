/// An Apple iBeacon advertisement: manufacturer data of company 0x004C whose payload
/// starts with type 0x02 and length 0x15 (21), then UUID, major, minor (big-endian)
/// and the measured power at 1 m.
public struct IBeacon: Hashable, Sendable, CustomStringConvertible {
    public var uuid: UUID128
    public var major: UInt16
    public var minor: UInt16
    /// Calibrated RSSI at 1 m, in dBm.
    public var measuredPower: Int8

    public init(uuid: UUID128, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    static let typeIBeacon: UInt8 = 0x02
    static let payloadLength: UInt8 = 0x15
    /// Company id (2) + type (1) + length (1) + UUID (16) + major (2) + minor (2) + power (1).
    static let manufacturerDataLength = 25

    public enum DecodeResult: Sendable {
        case iBeacon(IBeacon)
        /// Not an iBeacon at all (another company or another Apple message type).
        case notIBeacon
        /// Announces an iBeacon but is too short to hold one.
        case truncated
    }

    /// Decodes the value of a manufacturer-specific-data structure (company id included).
    /// Extra trailing bytes are tolerated: some tags append one.
    public static func decode(manufacturerData value: ArraySlice<UInt8>) -> DecodeResult {
        decode(manufacturerBytes: value)
    }

    @inline(__always)
    static func decode<Bytes: RandomAccessCollection>(manufacturerBytes value: Bytes) -> DecodeResult
        where Bytes.Element == UInt8, Bytes.Index == Int {
        guard value.uint16LE(at: 0) == CompanyIdentifier.apple.rawValue,
              value.byte(at: 2) == typeIBeacon, value.byte(at: 3) == payloadLength
        else { return .notIBeacon }
        guard value.count >= manufacturerDataLength,
              let high = value.uintBE(at: 4, count: 8), let low = value.uintBE(at: 12, count: 8),
              let major = value.uint16BE(at: 20), let minor = value.uint16BE(at: 22),
              let power = value.byte(at: 24)
        else { return .truncated }
        return .iBeacon(IBeacon(uuid: UUID128(high: high, low: low), major: major, minor: minor,
                                measuredPower: Int8(bitPattern: power)))
    }

    /// The match key: UUID and (major, minor) packed into one word.
    public var key: IBeaconKey { IBeaconKey(uuid: uuid, major: major, minor: minor) }

    /// Configuration form `UUID:MAJOR:MINOR`, as in docs/identities.md and `scan`'s JSON.
    public var description: String { "\(uuid):\(major):\(minor)" }
}

/// What identifies an iBeacon tag, as integers: hashing it costs three words.
public struct IBeaconKey: Hashable, Sendable {
    public var uuid: UUID128
    /// major << 16 | minor
    public var majorMinor: UInt32

    public init(uuid: UUID128, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        majorMinor = UInt32(major) << 16 | UInt32(minor)
    }

    public var major: UInt16 { UInt16(truncatingIfNeeded: majorMinor >> 16) }
    public var minor: UInt16 { UInt16(truncatingIfNeeded: majorMinor) }
}
