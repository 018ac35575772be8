import BluetoothCrypto

/// Where the responder's key pair and nonces come from: libcrypto in the product, fixed
/// values (the specification's sample keys) in tests, as time comes in as `now`.
public protocol PairingSecrets: Sendable {
    /// A P-256 key pair for one pairing; nil if none can be made.
    mutating func keyPair() -> P256KeyPair?
    /// A 128-bit nonce (Nb).
    mutating func nonce() -> Octets128
}

/// Fresh keys and nonces from libcrypto's generator.
public struct SystemPairingSecrets: PairingSecrets {
    public init() {}
    public func keyPair() -> P256KeyPair? { P256KeyPair.generate() }
    public func nonce() -> Octets128 { SecureRandom.octets128() }
}
