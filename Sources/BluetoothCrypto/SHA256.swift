import COpenSSL

/// SHA-256 and HMAC-SHA256 through OpenSSL's libcrypto, which the binary links anyway
/// (libcurl's TLS, AES for IRKs): a second crypto library (BoringSSL in swift-crypto)
/// would only add megabytes to the static release. Here, beside AES and P-256, so that
/// one target alone sees OpenSSL: tag keys and proofs (HMAC), idempotency keys, the held
/// events file and the roster's digest (SHA-256) all come through it.
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        let ok = data.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { out in
                copenssl_sha256(input.baseAddress, input.count, out.baseAddress) == 1
            }
        }
        // Fails only without memory; an all-zero digest would be a silent wrong key.
        precondition(ok, "libcrypto could not compute SHA-256")
        return digest
    }

    public static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: byteCount)
        let ok = key.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { input in
                mac.withUnsafeMutableBufferPointer { out in
                    copenssl_hmac_sha256(keyBytes.baseAddress, Int32(keyBytes.count), input.baseAddress, input.count,
                                         out.baseAddress) == 1
                }
            }
        }
        precondition(ok, "libcrypto could not compute HMAC-SHA256")
        return mac
    }
}
