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

    /// The bytes in one call rather than one per byte as the synthesized hash did:
    /// registering and matching a roster's thousands of identities hashes each of them
    /// several times. Equal identities have equal bytes, so this agrees with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case let .iBeacon(uuid, major, minor):
            hasher.combine(0 as UInt8)
            uuid.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(major)
            hasher.combine(minor)
        case let .eddystoneUID(namespace, instance):
            hasher.combine(1 as UInt8)
            namespace.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(instance.count)
            instance.withUnsafeBytes { hasher.combine(bytes: $0) }
        case let .address(address):
            hasher.combine(2 as UInt8)
            hasher.combine(address)
        case let .irk(key):
            hasher.combine(3 as UInt8)
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

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
        case let .eddystoneUID(namespace, instance): "\(HexText.lowercase(namespace)):\(HexText.lowercase(instance))"
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
        let identity: TagIdentity?
        let expected: String
        switch key {
        case "ibeacon":
            identity = value.withUTF8Bytes(parseIBeacon)
            expected = "\"UUID:MAJOR:MINOR\" with a 36-character UUID and MAJOR, MINOR in 0…65535, e.g. \"e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1\""
        case "eddystone_uid":
            identity = value.withUTF8Bytes(parseEddystoneUID)
            expected = "\"NAMESPACE:INSTANCE\" in hex, 20 and 12 digits, e.g. \"edd1ebeac04e5defa017:0123456789ab\""
        case "address":
            identity = value.withUTF8Bytes(BluetoothAddress.init(utf8:)).map(TagIdentity.address)
            expected = "a Bluetooth address \"AA:BB:CC:DD:EE:FF\""
        case "irk":
            identity = value.withUTF8Bytes { HexText.bytes($0, byteCount: 16) }.map(TagIdentity.irk)
            expected = "32 hex digits (a 128-bit identity resolving key)"
        default:
            throw .unknownKey(key)
        }
        guard let identity else { throw .invalid(key: key, expected: expected) }
        return identity
    }

    /// `UUID:MAJOR:MINOR`: exactly two colons, MAJOR and MINOR as `UInt16(_:)` reads them.
    private static func parseIBeacon(_ utf8: UnsafeBufferPointer<UInt8>) -> TagIdentity? {
        guard let fields = colonFields(utf8, count: 3), let uuid = parseUUID(fields[0]),
              let major = HexText.decimalUInt16(fields[1]), let minor = HexText.decimalUInt16(fields[2])
        else { return nil }
        return .iBeacon(uuid: uuid, major: major, minor: minor)
    }

    /// `NAMESPACE:INSTANCE`: exactly one colon, 20 and 12 hex digits.
    private static func parseEddystoneUID(_ utf8: UnsafeBufferPointer<UInt8>) -> TagIdentity? {
        guard let fields = colonFields(utf8, count: 2), let namespace = HexText.bytes(fields[0], byteCount: 10),
              let instance = HexText.bytes(fields[1], byteCount: 6)
        else { return nil }
        return .eddystoneUID(namespace: namespace, instance: instance)
    }

    /// The text between colons (empty fields kept), when there are exactly `count` fields.
    private static func colonFields(_ utf8: UnsafeBufferPointer<UInt8>, count: Int) -> [UnsafeBufferPointer<UInt8>]? {
        var fields = [UnsafeBufferPointer<UInt8>]()
        fields.reserveCapacity(count)
        var start = 0
        for index in 0 ... utf8.count where index == utf8.count || utf8[index] == UInt8(ascii: ":") {
            guard fields.count < count else { return nil }
            fields.append(UnsafeBufferPointer(rebasing: utf8[start ..< index]))
            start = index + 1
        }
        return fields.count == count ? fields : nil
    }

    /// Parses `8-4-4-4-12` hex UUID text into its 16 bytes, most significant first.
    public static func parseUUID(_ text: Substring) -> [UInt8]? {
        text.withUTF8Bytes(parseUUID)
    }

    /// `8-4-4-4-12` as UTF-8: 36 bytes, `-` at offsets 8, 13, 18 and 23, hex digits
    /// (either case) everywhere else.
    static func parseUUID(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count == 36 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var offset = 0
        for index in 0 ..< 16 {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard utf8[offset] == UInt8(ascii: "-") else { return nil }
                offset += 1
            }
            guard let high = HexText.digit(utf8[offset]), let low = HexText.digit(utf8[offset + 1]) else { return nil }
            bytes[index] = high << 4 | low
            offset += 2
        }
        return bytes
    }

    public static func formatUUID(_ bytes: [UInt8]) -> String {
        let h = HexText.lowercase(bytes)
        guard h.count == 32 else { return h }
        let c = Array(h)
        return String(c[0 ..< 8]) + "-" + String(c[8 ..< 12]) + "-" + String(c[12 ..< 16]) + "-" + String(c[16 ..< 20]) + "-" + String(c[20 ..< 32])
    }

    /// Exactly `byteCount` bytes of hex digits, either case; nothing else.
    public static func parseHex(_ text: Substring, byteCount: Int) -> [UInt8]? {
        text.withUTF8Bytes { HexText.bytes($0, byteCount: byteCount) }
    }
}
