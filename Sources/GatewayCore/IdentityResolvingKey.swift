import HCI

/// An identity resolving key: recognises the resolvable private addresses a device
/// generates with it (Core Specification Vol 3 Part H §2.2.2, Vol 6 Part B §1.3.2.2).
public struct IdentityResolvingKey: Hashable, @unchecked Sendable {
    /// The 16 key bytes, most significant first, as configuration files write them.
    public let bytes: [UInt8]
    /// Made once: setting up a cipher context per resolution would cost more than the
    /// resolution itself. `@unchecked Sendable`: see `AES128`.
    private let cipher: AES128

    /// Nil unless exactly 16 bytes.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 16, let cipher = AES128(key: bytes) else { return nil }
        self.bytes = bytes
        self.cipher = cipher
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// The random address hash function ah(k, r) = e(k, r') mod 2^24, r' = 13 zero
    /// octets ‖ r. The Core spec's `e` is AES-128 with the most significant octet of key
    /// and plaintext first, which is exactly AES's own byte order: the prand's most
    /// significant octet goes to block[13], and the hash is the last three output octets.
    public func ah(_ prand: UInt32) -> UInt32 {
        // One block on the stack, encrypted in place: each new address is tried against
        // every configured IRK, so an allocated block per call showed in profiles of a
        // busy door.
        var block: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &block) { bytes in
            bytes[13] = UInt8(truncatingIfNeeded: prand >> 16)
            bytes[14] = UInt8(truncatingIfNeeded: prand >> 8)
            bytes[15] = UInt8(truncatingIfNeeded: prand)
            // Only fails if libcrypto does; a failure must still not resolve anything,
            // hence the impossible hash.
            guard cipher.encryptBlock(UnsafeRawPointer(bytes.baseAddress!), into: bytes.baseAddress!) else { return UInt32.max }
            return UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
        }
    }

    /// Whether `address` (already known to be a resolvable private address) was
    /// generated with this key: its top 24 bits are prand, its low 24 bits the hash.
    public func resolves(_ address: BluetoothAddress) -> Bool {
        let prand = UInt32(truncatingIfNeeded: address.rawValue >> 24) & 0xFF_FFFF
        let hash = UInt32(truncatingIfNeeded: address.rawValue) & 0xFF_FFFF
        return ah(prand) == hash
    }

    /// A resolvable private address for this key from 22 random bits (the top two bits
    /// are forced to 0b01). For tests, simulations and the demo tag.
    public func resolvablePrivateAddress(random: UInt32) -> BluetoothAddress {
        let prand = (random & 0x3F_FFFF) | 0x40_0000
        return BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(ah(prand)))
    }
}

extension BluetoothAddress {
    /// Whether a report's address could be a resolvable private address: random type and
    /// top bits 0b01. Public and static addresses never go through IRK resolution.
    public func isResolvablePrivate(type: AddressType) -> Bool {
        type == .randomDevice && randomAddressKind == .resolvablePrivate
    }
}
