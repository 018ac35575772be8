import BluetoothCrypto
import XCTest

/// `equalsInConstantTime` agrees with `==` wherever the values differ (its timing is
/// libcrypto's CRYPTO_memcmp, which a unit test cannot measure).
final class ConstantTimeEqualityTests: XCTestCase {
    func testAgreesWithEqualityWhereverTheValuesDiffer() {
        let value = Octets128(mostSignificantFirst: Array(1 ... 16))!
        XCTAssertTrue(value.equalsInConstantTime(Octets128(mostSignificantFirst: Array(1 ... 16))!))
        for index in 0 ..< 16 {
            for bit in 0 ..< 8 {
                var bytes = value.mostSignificantFirst
                bytes[index] ^= 1 << UInt8(bit)
                let other = Octets128(mostSignificantFirst: bytes)!
                XCTAssertFalse(value.equalsInConstantTime(other), "octet \(index) bit \(bit)")
                XCTAssertFalse(other.equalsInConstantTime(value))
            }
        }
        let wide = Octets256(mostSignificantFirst: Array(repeating: 0xA5, count: 32))!
        XCTAssertTrue(wide.equalsInConstantTime(wide))
        XCTAssertFalse(wide.equalsInConstantTime(Octets256(mostSignificantFirst: Array(repeating: 0xA5, count: 31) + [0xA4])!))
    }
}
