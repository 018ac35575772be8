import BluetoothCrypto
import HCI

/// A tag's 256-bit proof key `K_tag` (see docs/proof-protocol.md): either configured per tag or derived
/// from the site master key. Secret: its description never shows the bytes.
public struct TagKey: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32

    /// Kept to compare keys and hand them to provisioning; never printed.
    public let bytes: [UInt8]

    /// Nil unless exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The label of the derivation, so keys of a later scheme can never collide with v1's.
    static let derivationLabel = Array("BGW-TAG-KEY-v1".utf8)

    /// `K_tag = HMAC-SHA256(master_key, "BGW-TAG-KEY-v1" ‖ UTF8(tag id))`.
    public static func derive(masterKey: MasterKey, tagId: String) -> TagKey {
        var message = derivationLabel
        message.append(contentsOf: tagId.utf8)
        // HMAC-SHA256 is always 32 bytes, exactly a key's size.
        return TagKey(unchecked: SHA256.hmac(key: masterKey.bytes, message: message))
    }

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Constant time, like every comparison of secrets here (see docs/security.md).
    public static func == (lhs: TagKey, rhs: TagKey) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    public var description: String { "TagKey(********)" }
}

/// The site master key: 32 bytes, stored as 64 hex digits in a 0600 file.
public struct MasterKey: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32

    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// A fresh key from `generator`; `SystemRandomNumberGenerator` is the operating
    /// system's CSPRNG (getrandom on Linux).
    public static func generate<G: RandomNumberGenerator>(using generator: inout G) -> MasterKey {
        var bytes = [UInt8]()
        bytes.reserveCapacity(byteCount)
        for _ in 0 ..< byteCount { bytes.append(UInt8.random(in: .min ... .max, using: &generator)) }
        return MasterKey(unchecked: bytes)
    }

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The key file's content: 64 lower-case hex digits and a newline.
    public var fileContent: String { HexText.lowercase(bytes) + "\n" }

    /// Parses a key file's content: 64 hex digits, surrounding whitespace ignored.
    public init?(fileContent: [UInt8]) {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = fileContent.firstIndex(where: { !isSpace($0) }),
              let last = fileContent.lastIndex(where: { !isSpace($0) }) else { return nil }
        let text = String(decoding: fileContent[first ... last], as: UTF8.self)
        guard let bytes = text.withUTF8Bytes({ HexText.bytes($0, byteCount: Self.byteCount) }) else { return nil }
        self.init(bytes: bytes)
    }

    public static func == (lhs: MasterKey, rhs: MasterKey) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    public var description: String { "MasterKey(********)" }
}

/// Equal length and equal bytes, in time that depends only on the length: the loop
/// never exits early, so a peer cannot learn how many leading bytes it got right.
public func constantTimeEqual(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
    return difference == 0
}
