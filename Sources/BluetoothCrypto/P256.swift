import COpenSSL
import HCI

/// A point of the NIST P-256 curve used as an LE Secure Connections public key. Only
/// valid points exist as values: a peer's key that is off the curve (the invalid-curve
/// attack) never gets this far.
public struct P256PublicKey: Hashable, Sendable {
    public let x: Octets256
    public let y: Octets256

    /// Nil unless (x, y) is a point of the curve.
    public init?(x: Octets256, y: Octets256) {
        let point = x.mostSignificantFirst + y.mostSignificantFirst
        guard point.withUnsafeBufferPointer({ copenssl_p256_is_valid_point($0.baseAddress) }) == 1 else { return nil }
        self.x = x
        self.y = y
    }

    /// The 64 octets of SMP's Pairing Public Key: X then Y, each least significant first.
    public init?(smpOctets octets: some Collection<UInt8>) {
        guard octets.count == 2 * Octets256.count,
              let x = Octets256(leastSignificantFirst: octets.prefix(Octets256.count)),
              let y = Octets256(leastSignificantFirst: octets.dropFirst(Octets256.count)) else { return nil }
        self.init(x: x, y: y)
    }

    /// X then Y, each least significant first, as SMP's Pairing Public Key carries them.
    public var smpOctets: [UInt8] { x.leastSignificantFirst + y.leastSignificantFirst }

    /// The debug public key of LE Secure Connections (Core Vol 3 Part H §2.3.5.6.1): its
    /// private key is published, so anyone listening can derive a pairing made with it.
    public static let smpDebugKey = P256PublicKey(x: octets("20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6"),
                                                  y: octets("dc809c49652aeb6d63329abf5a52155c766345c28fed3024741c8ed01589d28b"))!

    /// A coordinate written in the source as 64 hex digits.
    private static func octets(_ hex: String) -> Octets256 {
        let bytes = Array(hex.utf8).withUnsafeBufferPointer { HexText.bytes($0, byteCount: Octets256.count) }
        return Octets256(mostSignificantFirst: bytes!)!
    }
}

/// A P-256 key pair held by libcrypto (the private scalar never leaves it), for one
/// pairing's ECDH. The only file that sees libcrypto's key type.
public final class P256KeyPair: @unchecked Sendable {
    // @unchecked: the key is immutable after creation and only read (public point, ECDH).
    private let key: OpaquePointer
    public let publicKey: P256PublicKey

    /// A fresh key pair from libcrypto's generator; nil only if libcrypto fails.
    public static func generate() -> P256KeyPair? {
        guard let key = copenssl_p256_generate() else { return nil }
        return P256KeyPair(owning: key)
    }

    /// The key pair of a known private scalar (most significant first): the
    /// specification's sample data and test peers. Nil when the scalar is 0 or ≥ n.
    public convenience init?(privateKey: Octets256) {
        guard let key = privateKey.mostSignificantFirst.withUnsafeBufferPointer({ copenssl_p256_from_private($0.baseAddress) })
        else { return nil }
        self.init(owning: key)
    }

    private init?(owning key: OpaquePointer) {
        var point = [UInt8](repeating: 0, count: 2 * Octets256.count)
        guard point.withUnsafeMutableBufferPointer({ copenssl_p256_public_point(key, $0.baseAddress) }) == 1,
              let publicKey = P256PublicKey(x: Octets256(validated: Array(point[..<32])), y: Octets256(validated: Array(point[32...])))
        else {
            copenssl_p256_free(key)
            return nil
        }
        self.key = key
        self.publicKey = publicKey
    }

    deinit { copenssl_p256_free(key) }

    /// The ECDH shared secret with `peer` (its X coordinate); nil only if libcrypto fails.
    public func sharedSecret(with peer: P256PublicKey) -> DHKey? {
        let point = peer.x.mostSignificantFirst + peer.y.mostSignificantFirst
        var secret = [UInt8](repeating: 0, count: Octets256.count)
        let ok = point.withUnsafeBufferPointer { input in
            secret.withUnsafeMutableBufferPointer { output in copenssl_p256_shared_secret(key, input.baseAddress, output.baseAddress) }
        }
        guard ok == 1 else { return nil }
        return DHKey(Octets256(validated: secret))
    }
}
