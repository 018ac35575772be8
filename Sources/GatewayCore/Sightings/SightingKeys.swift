import BluetoothCrypto
import PresenceProof

/// The two keys of the site's sightings (docs/neighbours.md), both derived from the site
/// master key, so every door of the site has them and nobody without the key can name a
/// person or sign a sighting:
///
/// - `K_person = HMAC-SHA256(master_key, "BGW-SIGHTING-PERSON-v1")`: a person travels as
///   `HMAC-SHA256(K_person, UTF8(person id))` cut to its first 8 bytes (`PersonHash`),
///   never as the id or a tag address;
/// - `K_sign = HMAC-SHA256(master_key, "BGW-SIGHTING-SIGN-v1")`: the signature of a
///   sighting report is `HMAC-SHA256(K_sign, every byte before it)`.
///
/// Secret: its description never shows the bytes.
public struct SightingKeys: Hashable, Sendable, CustomStringConvertible {
    let personKey: [UInt8]
    let signingKey: [UInt8]

    static let personLabel = Array("BGW-SIGHTING-PERSON-v1".utf8)
    static let signingLabel = Array("BGW-SIGHTING-SIGN-v1".utf8)

    public init(masterKey: MasterKey) {
        personKey = SHA256.hmac(key: masterKey.bytes, message: Self.personLabel)
        signingKey = SHA256.hmac(key: masterKey.bytes, message: Self.signingLabel)
    }

    /// The person as sightings name them.
    public func personHash(_ personId: String) -> PersonHash {
        let mac = SHA256.hmac(key: personKey, message: Array(personId.utf8))
        var value: UInt64 = 0
        for byte in mac.prefix(PersonHash.byteCount) { value = value << 8 | UInt64(byte) }
        return PersonHash(rawValue: value)
    }

    /// The signature of a report's body (every byte before the signature).
    func signature(of body: ArraySlice<UInt8>) -> [UInt8] {
        SHA256.hmac(key: signingKey, message: Array(body))
    }

    public static func == (lhs: SightingKeys, rhs: SightingKeys) -> Bool {
        constantTimeEqual(lhs.personKey, rhs.personKey) && constantTimeEqual(lhs.signingKey, rhs.signingKey)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(personKey) }

    public var description: String { "SightingKeys(********)" }
}

/// A person in a sighting: the first 8 bytes (big-endian) of their keyed hash. 64 bits:
/// two persons of a site of 10,000 collide with a probability of about 3 × 10⁻¹².
public struct PersonHash: Hashable, Sendable {
    public static let byteCount = 8
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }
}
