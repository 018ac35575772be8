import COpenSSL

/// Octets from libcrypto's cryptographically secure generator: pairing nonces, identity
/// resolving keys.
public enum SecureRandom {
    public static func octets128() -> Octets128 {
        var bytes = [UInt8](repeating: 0, count: Octets128.count)
        let ok = bytes.withUnsafeMutableBufferPointer { copenssl_random_bytes($0.baseAddress, Int32($0.count)) }
        // A predictable nonce or key would be worse than stopping.
        precondition(ok == 1, "libcrypto's generator failed")
        return Octets128(validated: bytes)
    }
}
