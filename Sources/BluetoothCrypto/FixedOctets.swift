/// A value of fixed width as the Core specification's security functions see it: octets
/// most significant first, the order the specification (and its sample data) writes them
/// in. SMP PDUs carry the same values least significant octet first; the two initialisers
/// and accessors name which order they mean, so no caller reverses bytes by hand.
public protocol FixedOctets: Hashable, Sendable, CustomStringConvertible {
    static var count: Int { get }
    var mostSignificantFirst: [UInt8] { get }
    /// `bytes` already holds exactly `count` octets, most significant first (anything else
    /// is a programming error and traps).
    init(validated bytes: [UInt8])
}

extension FixedOctets {
    /// Nil unless exactly `count` octets.
    public init?(mostSignificantFirst bytes: some Collection<UInt8>) {
        guard bytes.count == Self.count else { return nil }
        self.init(validated: Array(bytes))
    }

    /// From the order SMP PDUs carry (least significant octet first); nil unless exactly
    /// `count` octets.
    public init?(leastSignificantFirst bytes: some Collection<UInt8>) {
        guard bytes.count == Self.count else { return nil }
        self.init(validated: bytes.reversed())
    }

    /// The order SMP PDUs carry.
    public var leastSignificantFirst: [UInt8] { mostSignificantFirst.reversed() }

    /// Hex, most significant octet first (public values only: secrets wrap these in
    /// `SecretOctets`, whose description is redacted).
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(2 * Self.count)
        for byte in mostSignificantFirst {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// 128 bits: nonces, confirm and check values, keys (keys go inside `SecretOctets`).
public struct Octets128: FixedOctets {
    public static let count = 16
    public let mostSignificantFirst: [UInt8]
    public init(validated bytes: [UInt8]) {
        precondition(bytes.count == Self.count, "an Octets128 of \(bytes.count) octets")
        mostSignificantFirst = bytes
    }

    public static let zero = Octets128(validated: [UInt8](repeating: 0, count: count))
}

/// 256 bits: a P-256 coordinate or an ECDH shared secret.
public struct Octets256: FixedOctets {
    public static let count = 32
    public let mostSignificantFirst: [UInt8]

    public init(validated bytes: [UInt8]) {
        precondition(bytes.count == Self.count, "an Octets256 of \(bytes.count) octets")
        mostSignificantFirst = bytes
    }
}
