import HCI

/// A device address with its type, as f5 and f6 take A1 and A2 (56 bits): the type
/// octet (0x00 public, 0x01 random) then the address, most significant octet first.
public struct AddressWithType: Hashable, Sendable {
    public var address: BluetoothAddress
    public var isRandom: Bool

    public init(_ address: BluetoothAddress, isRandom: Bool) {
        self.address = address
        self.isRandom = isRandom
    }

    public var mostSignificantFirst: [UInt8] {
        [isRandom ? 1 : 0] + (0 ..< 6).reversed().map { UInt8(truncatingIfNeeded: address.rawValue >> (8 * UInt64($0))) }
    }
}

/// The LE Secure Connections functions of Core Vol 3 Part H §2.2.6–2.2.9 on AES-CMAC,
/// and ah (§2.2.2). Every argument and result is most significant octet first, as the
/// specification writes them (the types say so); SMP PDUs carry them reversed.
public enum SecurityFunctions {
    /// f4(U, V, X, Z) = AES-CMAC_X(U ‖ V ‖ Z): confirm values.
    public static func f4(u: Octets256, v: Octets256, x: Octets128, z: UInt8) -> Octets128 {
        AESCMAC.mac(key: x, message: u.mostSignificantFirst + v.mostSignificantFirst + [z])
    }

    /// f5(W, N1, N2, A1, A2): the MacKey and the LTK from the DHKey.
    public static func f5(w: DHKey, n1: Octets128, n2: Octets128, a1: AddressWithType, a2: AddressWithType)
        -> (macKey: SecretKey128, ltk: SecretKey128) {
        let t = AESCMAC.mac(key: salt, message: w.revealed.mostSignificantFirst)
        func derive(counter: UInt8) -> SecretKey128 {
            // Counter ‖ keyID "btle" ‖ N1 ‖ N2 ‖ A1 ‖ A2 ‖ Length (256, two octets).
            // Appended part by part: one long `+` chain is more than the release's
            // compiler type-checks in reasonable time.
            var message: [UInt8] = [counter, 0x62, 0x74, 0x6C, 0x65]
            message += n1.mostSignificantFirst
            message += n2.mostSignificantFirst
            message += a1.mostSignificantFirst
            message += a2.mostSignificantFirst
            message += [0x01, 0x00]
            return SecretKey128(AESCMAC.mac(key: t, message: message))
        }
        return (derive(counter: 0), derive(counter: 1))
    }

    /// f6(W, N1, N2, R, IOcap, A1, A2) = AES-CMAC_W(N1 ‖ N2 ‖ R ‖ IOcap ‖ A1 ‖ A2): the
    /// DHKey check values. `ioCap` is 24 bits: AuthReq, OOB data flag, IO capability, in
    /// that order from the most significant octet.
    public static func f6(w: SecretKey128, n1: Octets128, n2: Octets128, r: Octets128, ioCap: UInt32,
                          a1: AddressWithType, a2: AddressWithType) -> Octets128 {
        let ioCapOctets = [UInt8(truncatingIfNeeded: ioCap >> 16), UInt8(truncatingIfNeeded: ioCap >> 8), UInt8(truncatingIfNeeded: ioCap)]
        // Appended part by part, as in f5.
        var message: [UInt8] = n1.mostSignificantFirst
        message += n2.mostSignificantFirst
        message += r.mostSignificantFirst
        message += ioCapOctets
        message += a1.mostSignificantFirst
        message += a2.mostSignificantFirst
        return AESCMAC.mac(key: w.revealed, message: message)
    }

    /// g2(U, V, X, Y) = AES-CMAC_X(U ‖ V ‖ Y) mod 2^32; the value shown for Numeric
    /// Comparison is this mod 10^6.
    public static func g2(u: Octets256, v: Octets256, x: Octets128, y: Octets128) -> UInt32 {
        let mac = AESCMAC.mac(key: x, message: u.mostSignificantFirst + v.mostSignificantFirst + y.mostSignificantFirst)
        return mac.mostSignificantFirst[12...].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// ah(k, r) with a 24-bit r (see `AES128.randomAddressHash`).
    public static func ah(k: SecretKey128, r: UInt32) -> UInt32 {
        guard let cipher = AES128(key: k.revealed.mostSignificantFirst) else { preconditionFailure("libcrypto has no AES-128 context") }
        return cipher.randomAddressHash(r & 0xFF_FFFF)
    }

    /// f5's SALT.
    private static let salt = Octets128(validated: [
        0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE,
    ])
}
