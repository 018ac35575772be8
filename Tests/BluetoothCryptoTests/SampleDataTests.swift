import BluetoothCrypto
import HCI
import XCTest

/// The Core specification's sample data (Vol 3 Part H, Appendix D) and RFC 4493's AES-CMAC
/// examples. Values are written as the specification prints them: most significant
/// octet first.
final class SampleDataTests: XCTestCase {
    // D.2–D.5: the P-256 sample keys, nonces and addresses.
    let pkaX = octets256("20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6")
    let pkaY = octets256("dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b")
    let pkbX = octets256("1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190")
    let pkbY = octets256("4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a")
    let privateA = octets256("3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd")
    let privateB = octets256("55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd")
    let dhKey = octets256("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")
    let n1 = octets128("d5cb8454 d177733e ffffb2ec 712baeab")
    let n2 = octets128("a6e8e7cc 25a75f6e 216583f7 ff3dc4cf")
    let a1 = AddressWithType(BluetoothAddress("56:12:37:37:bf:ce")!, isRandom: false)
    let a2 = AddressWithType(BluetoothAddress("a7:13:70:2d:cf:c1")!, isRandom: false)

    // D.1: RFC 4493's four examples.
    func testAESCMACMatchesRFC4493() {
        let key = octets128("2b7e1516 28aed2a6 abf71588 09cf4f3c")
        let message = bytes("6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51"
            + "30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710")
        XCTAssertEqual(AESCMAC.mac(key: key, message: []), octets128("bb1d6929 e9593728 7fa37d12 9b756746"))
        XCTAssertEqual(AESCMAC.mac(key: key, message: Array(message[..<16])), octets128("070a16b4 6b4d4144 f79bdd9d d04a287c"))
        XCTAssertEqual(AESCMAC.mac(key: key, message: Array(message[..<40])), octets128("dfa66747 de9ae630 30ca3261 1497c827"))
        XCTAssertEqual(AESCMAC.mac(key: key, message: message), octets128("51f0bebf 7e3b9d92 fc497417 79363cfe"))
    }

    // The e function: FIPS-197's AES-128 example (Appendix C.1).
    func testEIsAES128() {
        let key = octets128("00010203 04050607 08090a0b 0c0d0e0f")
        let plaintext = octets128("00112233 44556677 8899aabb ccddeeff")
        XCTAssertEqual(AES128.e(key: key, plaintext: plaintext), octets128("69c4e0d8 6a7b0430 d8cdb780 70b4c55a"))
    }

    func testECDHMatchesTheSampleKeys() throws {
        let keyA = try XCTUnwrap(P256KeyPair(privateKey: privateA))
        let keyB = try XCTUnwrap(P256KeyPair(privateKey: privateB))
        XCTAssertEqual(keyA.publicKey.x, pkaX)
        XCTAssertEqual(keyA.publicKey.y, pkaY)
        XCTAssertEqual(keyB.publicKey.x, pkbX)
        XCTAssertEqual(keyB.publicKey.y, pkbY)
        XCTAssertEqual(keyA.sharedSecret(with: keyB.publicKey)?.revealed, dhKey)
        XCTAssertEqual(keyB.sharedSecret(with: keyA.publicKey)?.revealed, dhKey)
    }

    func testGeneratedKeyPairsAgree() throws {
        let one = try XCTUnwrap(P256KeyPair.generate())
        let other = try XCTUnwrap(P256KeyPair.generate())
        XCTAssertNotEqual(one.publicKey, other.publicKey)
        let shared = try XCTUnwrap(one.sharedSecret(with: other.publicKey))
        XCTAssertEqual(other.sharedSecret(with: one.publicKey), shared)
    }

    func testPointsOffTheCurveAreRefused() {
        // The sample point with Y changed in its last bit, X = p (out of range), the origin.
        XCTAssertNotNil(P256PublicKey(x: pkaX, y: pkaY))
        var y = pkaY.mostSignificantFirst
        y[31] ^= 1
        XCTAssertNil(P256PublicKey(x: pkaX, y: Octets256(validated: y)))
        let p = octets256("ffffffff 00000001 00000000 00000000 00000000 ffffffff ffffffff ffffffff")
        XCTAssertNil(P256PublicKey(x: p, y: pkaY))
        let zero = Octets256(validated: [UInt8](repeating: 0, count: 32))
        XCTAssertNil(P256PublicKey(x: zero, y: zero))
        XCTAssertNil(P256KeyPair(privateKey: zero), "a zero scalar is no key")
    }

    func testSMPOrderIsLeastSignificantFirst() throws {
        let key = try XCTUnwrap(P256PublicKey(x: pkaX, y: pkaY))
        let wire = key.smpOctets
        XCTAssertEqual(wire.count, 64)
        XCTAssertEqual(wire.first, 0xE6, "X's least significant octet travels first")
        XCTAssertEqual(wire[32], 0x8B, "then Y's")
        XCTAssertEqual(P256PublicKey(smpOctets: wire), key)
        XCTAssertEqual(Octets128(leastSignificantFirst: n1.leastSignificantFirst), n1)
    }

    // D.2
    func testF4() {
        // The specification's V here is the sample data's, as printed.
        XCTAssertEqual(SecurityFunctions.f4(u: pkaX, v: privateB, x: n1, z: 0), octets128("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    // D.3
    func testF5() {
        let (macKey, ltk) = SecurityFunctions.f5(w: DHKey(dhKey), n1: n1, n2: n2, a1: a1, a2: a2)
        XCTAssertEqual(macKey.revealed, octets128("2965f176 a1084a02 fd3f6a20 ce636e20"))
        XCTAssertEqual(ltk.revealed, octets128("69867911 69d7cd23 980522b5 94750a38"))
    }

    // D.4
    func testF6() {
        let macKey = SecretKey128(octets128("2965f176 a1084a02 fd3f6a20 ce636e20"))
        let r = octets128("12a3343b b453bb54 08da42d2 0c2d0fc8")
        XCTAssertEqual(SecurityFunctions.f6(w: macKey, n1: n1, n2: n2, r: r, ioCap: 0x01_0102, a1: a1, a2: a2),
                       octets128("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    // D.5
    func testG2() {
        XCTAssertEqual(SecurityFunctions.g2(u: pkaX, v: privateB, x: n1, y: n2), 0x2F9E_D5BA)
    }

    // D.7
    func testAh() {
        let irk = SecretKey128(octets128("ec0234a3 57c8ad05 341010a6 0a397d9b"))
        XCTAssertEqual(SecurityFunctions.ah(k: irk, r: 0x70_8194), 0x0D_FBAA)
    }

    func testSecretsNeverPrintTheirOctets() {
        let irk = SecretKey128(octets128("ec0234a3 57c8ad05 341010a6 0a397d9b"))
        var dumped = ""
        dump(irk, to: &dumped)
        for text in ["\(irk)", String(reflecting: irk), String(describing: [irk]), dumped] {
            XCTAssertFalse(text.contains("ec02") || text.contains("236"), text)
        }
    }
}

/// Hex as the specification prints it (spaces allowed), most significant octet first.
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8.filter { $0 != UInt8(ascii: " ") })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0 ..< $0 + 2], as: UTF8.self), radix: 16)! }
}

func octets128(_ hex: String) -> Octets128 { Octets128(mostSignificantFirst: bytes(hex))! }
func octets256(_ hex: String) -> Octets256 { Octets256(mostSignificantFirst: bytes(hex))! }
