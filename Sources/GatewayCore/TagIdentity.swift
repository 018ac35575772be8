import HCI

/// How a configured tag is recognised in advertisements (see docs/identities.md).
public enum TagIdentity: Hashable, Sendable, CustomStringConvertible {
    /// Apple iBeacon: proximity UUID (16 bytes, as transmitted), major, minor.
    case iBeacon(uuid: [UInt8], major: UInt16, minor: UInt16)
    /// Eddystone-UID frame: 10-byte namespace, 6-byte instance.
    case eddystoneUID(namespace: [UInt8], instance: [UInt8])
    /// The advertiser's public or static-random address.
    case address(BluetoothAddress)
    /// Resolvable private addresses generated with this 16-byte identity resolving key
    /// (most significant byte first, as written in configuration files).
    case irk([UInt8])

    /// The configuration key this identity is written under.
    public var configurationKey: String {
        switch self {
        case .iBeacon: "ibeacon"
        case .eddystoneUID: "eddystone_uid"
        case .address: "address"
        case .irk: "irk"
        }
    }

    /// The identity in configuration-file form. IRKs are secrets and are masked.
    public var description: String {
        switch self {
        case let .iBeacon(uuid, major, minor): "\(TagIdentity.formatUUID(uuid)):\(major):\(minor)"
        case let .eddystoneUID(namespace, instance): "\(hex(namespace)):\(hex(instance))"
        case let .address(address): address.description
        case .irk: "********************************"
        }
    }

    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        case invalid(key: String, expected: String)
        case unknownKey(String)

        public var description: String {
            switch self {
            case let .invalid(key, expected): "\(key) must be \(expected)"
            case let .unknownKey(key): "\(key) is not a tag identity (use ibeacon, eddystone_uid, address or irk)"
            }
        }
    }

    /// Parses the value of one identity key of a `[[person.tag]]` table.
    public static func parse(key: String, value: String) throws(ParseError) -> TagIdentity {
        switch key {
        case "ibeacon":
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let uuid = parseUUID(parts[0]),
                  let major = UInt16(parts[1]), let minor = UInt16(parts[2])
            else {
                throw .invalid(key: key, expected: "\"UUID:MAJOR:MINOR\" with a 36-character UUID and MAJOR, MINOR in 0…65535, e.g. \"e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1\"")
            }
            return .iBeacon(uuid: uuid, major: major, minor: minor)
        case "eddystone_uid":
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let namespace = parseHex(parts[0], byteCount: 10),
                  let instance = parseHex(parts[1], byteCount: 6)
            else {
                throw .invalid(key: key, expected: "\"NAMESPACE:INSTANCE\" in hex, 20 and 12 digits, e.g. \"edd1ebeac04e5defa017:0123456789ab\"")
            }
            return .eddystoneUID(namespace: namespace, instance: instance)
        case "address":
            guard let address = BluetoothAddress(value) else {
                throw .invalid(key: key, expected: "a Bluetooth address \"AA:BB:CC:DD:EE:FF\"")
            }
            return .address(address)
        case "irk":
            guard let key16 = parseHex(Substring(value), byteCount: 16) else {
                throw .invalid(key: key, expected: "32 hex digits (a 128-bit identity resolving key)")
            }
            return .irk(key16)
        default:
            throw .unknownKey(key)
        }
    }

    /// Parses `8-4-4-4-12` hex UUID text into its 16 bytes, most significant first.
    public static func parseUUID(_ text: Substring) -> [UInt8]? {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
        return parseHex(Substring(groups.joined()), byteCount: 16)
    }

    public static func formatUUID(_ bytes: [UInt8]) -> String {
        let h = hex(bytes)
        guard h.count == 32 else { return h }
        let c = Array(h)
        return String(c[0 ..< 8]) + "-" + String(c[8 ..< 12]) + "-" + String(c[12 ..< 16]) + "-" + String(c[16 ..< 20]) + "-" + String(c[20 ..< 32])
    }

    /// Exactly `byteCount` bytes of hex digits, either case; nothing else.
    public static func parseHex(_ text: Substring, byteCount: Int) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == byteCount * 2 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(byteCount)
        var index = 0
        while index < utf8.count {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Lower-case hex of bytes, no separators.
public func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var utf8 = [UInt8]()
    for byte in bytes {
        utf8.append(digits[Int(byte >> 4)])
        utf8.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: utf8, as: UTF8.self)
}
