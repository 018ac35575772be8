import COpenSSL

/// AES-CMAC (RFC 4493) with a 128-bit key through libcrypto: the MAC every SMP function
/// (f4, f5, f6, g2) is built on (Core Vol 3 Part H §2.2.5). Octet strings in RFC 4493's
/// order, which is the specification's most-significant-first order.
public enum AESCMAC {
    public static func mac(key: Octets128, message: [UInt8]) -> Octets128 {
        var out = [UInt8](repeating: 0, count: Octets128.count)
        let ok = key.mostSignificantFirst.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { output in
                    copenssl_aes128_cmac(keyBytes.baseAddress, input.baseAddress, input.count, output.baseAddress) == 1
                }
            }
        }
        // Fails only without memory (or a libcrypto without CMAC); a zero MAC would be a
        // silent wrong key.
        precondition(ok, "libcrypto could not compute AES-CMAC")
        return Octets128(validated: out)
    }
}
