import BluetoothCrypto
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

    /// The random address hash function ah(k, r) with this key (see `AES128.randomAddressHash`).
    public func ah(_ prand: UInt32) -> UInt32 { cipher.randomAddressHash(prand) }

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
