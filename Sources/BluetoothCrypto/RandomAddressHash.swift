/// The random address hash function ah (Core Vol 3 Part H §2.2.2): ah(k, r) = e(k, r')
/// mod 2^24, r' = 13 zero octets ‖ r.
extension AES128 {
    /// `ah` with this cipher's key (an IRK) and the 24-bit prand, allocation-free: IRK
    /// resolution tries each new address against every configured IRK. The prand's most
    /// significant octet goes to block[13], and the hash is the last three output octets.
    public func randomAddressHash(_ prand: UInt32) -> UInt32 {
        var block: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &block) { bytes in
            bytes[13] = UInt8(truncatingIfNeeded: prand >> 16)
            bytes[14] = UInt8(truncatingIfNeeded: prand >> 8)
            bytes[15] = UInt8(truncatingIfNeeded: prand)
            // Only fails if libcrypto does; a failure must still not resolve anything,
            // hence the impossible hash.
            guard encryptBlock(UnsafeRawPointer(bytes.baseAddress!), into: bytes.baseAddress!) else { return UInt32.max }
            return UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
        }
    }
}
