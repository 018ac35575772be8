import COpenSSL

extension FixedOctets {
    /// Equality whose time does not depend on where the values first differ (libcrypto's
    /// `CRYPTO_memcmp`): for values a peer may probe octet by octet, such as the DHKey
    /// check it sends against the one we computed (docs/pairing.md).
    public func equalsInConstantTime(_ other: Self) -> Bool {
        let ours = mostSignificantFirst
        let theirs = other.mostSignificantFirst
        return ours.withUnsafeBytes { a in
            theirs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, Self.count) == 0 }
        }
    }
}
