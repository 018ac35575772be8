/// A 48-bit Bluetooth device address.
///
/// Stored as one integer so it hashes and compares in a single word — it is the key of
/// every per-advertiser table on the hot path. The most significant byte is the first
/// one written in the usual text form `AA:BB:CC:DD:EE:FF`; on the wire (HCI) the bytes
/// travel least significant first.
public struct BluetoothAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// Parses `AA:BB:CC:DD:EE:FF` (hex digits in either case; `-` also accepted as separator).
    public init?(_ text: some StringProtocol) {
        guard let address = text.withUTF8Bytes(BluetoothAddress.init(utf8:)) else { return nil }
        self = address
    }

    /// The text form as UTF-8 bytes (see ``HexText`` for why bytes). It accepts exactly
    /// what splitting at every run of `:` and `-` and reading each part with
    /// `UInt8(part, radix: 16)` accepts, so configurations valid so far stay valid: six
    /// parts of two bytes, a part being two hex digits or `+` and one; separators may
    /// lead, trail, repeat and mix.
    public init?(utf8: UnsafeBufferPointer<UInt8>) {
        var value: UInt64 = 0
        var parts = 0
        var index = 0
        while index < utf8.count {
            if Self.isSeparator(utf8[index]) {
                index += 1
                continue
            }
            let start = index
            while index < utf8.count, !Self.isSeparator(utf8[index]) { index += 1 }
            guard index - start == 2, parts < 6 else { return nil }
            let high: UInt8?
            if utf8[start] == UInt8(ascii: "+") { high = 0 } else { high = HexText.digit(utf8[start]) }
            guard let high, let low = HexText.digit(utf8[start + 1]) else { return nil }
            value = value << 8 | UInt64(high << 4 | low)
            parts += 1
        }
        guard parts == 6 else { return nil }
        rawValue = value
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    public var description: String {
        var utf8 = [UInt8]()
        utf8.reserveCapacity(17)
        for index in (0 ..< 6).reversed() {
            let byte = UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(index)))
            utf8.append(Self.hexDigits[Int(byte >> 4)])
            utf8.append(Self.hexDigits[Int(byte & 0x0F)])
            if index > 0 { utf8.append(UInt8(ascii: ":")) }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// For random addresses: the two most significant bits say which kind it is.
    public var randomAddressKind: RandomAddressKind {
        switch rawValue >> 46 {
        case 0b11: .staticRandom
        case 0b01: .resolvablePrivate
        case 0b00: .nonResolvablePrivate
        default: .reserved
        }
    }

    public enum RandomAddressKind: Sendable {
        case staticRandom, resolvablePrivate, nonResolvablePrivate, reserved
    }
}

/// The address type byte of LE advertising reports and connection events.
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let publicDevice = AddressType(rawValue: 0x00)
    public static let randomDevice = AddressType(rawValue: 0x01)
    /// Public identity address, reported when the controller resolved an RPA.
    public static let publicIdentity = AddressType(rawValue: 0x02)
    /// Random (static) identity address, reported when the controller resolved an RPA.
    public static let randomIdentity = AddressType(rawValue: 0x03)
    /// Extended reports only: anonymous advertisement, no address.
    public static let anonymous = AddressType(rawValue: 0xFF)

    public var isRandom: Bool { self == .randomDevice || self == .randomIdentity }

    public var description: String {
        switch self {
        case .publicDevice: "public"
        case .randomDevice: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        default: "type(0x\(String(rawValue, radix: 16)))"
        }
    }
}
