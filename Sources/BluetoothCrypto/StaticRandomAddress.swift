import HCI

extension BluetoothAddress {
    /// A static random address derived from `name`: the first six bytes of
    /// SHA-256(`name`) with the two top bits set (Core Vol 6 Part B §1.3.2.1), so the same
    /// name always gives the same address. The random part is never all zeros or all
    /// ones, which the specification forbids.
    public static func staticRandom(derivedFrom name: [UInt8]) -> BluetoothAddress {
        let digest = SHA256.hash(name)
        var random = digest.prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & 0x3FFF_FFFF_FFFF
        if random == 0 || random == 0x3FFF_FFFF_FFFF { random ^= 1 }
        return BluetoothAddress(rawValue: random | 0xC000_0000_0000)
    }
}
