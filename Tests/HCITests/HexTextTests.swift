import HCI
import XCTest

/// The byte-level parsers of hex and decimal text, and the Bluetooth address read with
/// them: what they accept and refuse, edge cases included.
final class HexTextTests: XCTestCase {
    private func hexBytes(_ text: String, _ count: Int) -> [UInt8]? {
        text.withUTF8Bytes { HexText.bytes($0, byteCount: count) }
    }

    private func decimal(_ text: String) -> UInt16? {
        text.withUTF8Bytes(HexText.decimalUInt16)
    }

    func testDigitsInEitherCaseAndNothingElse() {
        for (index, byte) in "0123456789abcdef".utf8.enumerated() { XCTAssertEqual(HexText.digit(byte), UInt8(index)) }
        for (index, byte) in "ABCDEF".utf8.enumerated() { XCTAssertEqual(HexText.digit(byte), UInt8(index + 10)) }
        let digits = Set("0123456789abcdefABCDEF".utf8)
        for byte in UInt8.min ... UInt8.max where !digits.contains(byte) {
            XCTAssertNil(HexText.digit(byte), "byte \(byte)")
        }
    }

    func testBytesNeedExactlyTwoDigitsPerByte() {
        XCTAssertEqual(hexBytes("00ff7Fa0", 4), [0x00, 0xFF, 0x7F, 0xA0])
        XCTAssertEqual(hexBytes("DEADbeef", 4), [0xDE, 0xAD, 0xBE, 0xEF])
        XCTAssertEqual(hexBytes("", 0), [])
        XCTAssertNil(hexBytes("00ff7fa", 4), "one digit short")
        XCTAssertNil(hexBytes("00ff7fa00", 4), "one digit over")
        XCTAssertNil(hexBytes("00ff7fa0", 3), "a whole byte over")
        XCTAssertNil(hexBytes("00fg7fa0", 4), "not a hex digit")
        XCTAssertNil(hexBytes("00:f7:fa", 3), "separators")
        XCTAssertNil(hexBytes("+0ff7fa0", 4), "a sign")
        XCTAssertNil(hexBytes(" 0ff7fa0", 4), "a space")
        XCTAssertNil(hexBytes("00ff7fé", 4), "non-ASCII of the right byte count")
    }

    func testDecimalReadsAsTheStandardLibraryDoes() {
        XCTAssertEqual(decimal("0"), 0)
        XCTAssertEqual(decimal("65535"), 65535)
        XCTAssertEqual(decimal("000000000000000000065535"), 65535, "leading zeros")
        XCTAssertEqual(decimal("+7"), 7)
        XCTAssertEqual(decimal("-0"), 0, "a negative zero is zero")
        XCTAssertEqual(decimal("-000"), 0)
        XCTAssertNil(decimal("65536"), "out of range")
        XCTAssertNil(decimal("99999999999999999999999"), "far out of range")
        XCTAssertNil(decimal("-1"), "negative")
        XCTAssertNil(decimal(""))
        XCTAssertNil(decimal("+"))
        XCTAssertNil(decimal("-"))
        XCTAssertNil(decimal("+-1"))
        XCTAssertNil(decimal("1 "))
        XCTAssertNil(decimal("0x10"))
        XCTAssertNil(decimal("1_000"))
        XCTAssertNil(decimal("١"), "a digit of another script")
        for text in ["0", "65535", "65536", "+7", "-0", "-1", "", "+", "00012", "1e3"] {
            XCTAssertEqual(decimal(text), UInt16(text), text)
        }
    }

    func testBluetoothAddressInEitherCaseWithColonsOrDashes() {
        XCTAssertEqual(BluetoothAddress("C0:11:22:33:44:55")?.rawValue, 0xC011_2233_4455)
        XCTAssertEqual(BluetoothAddress("c0:1a:2b:3c:4d:5e")?.rawValue, 0xC01A_2B3C_4D5E)
        XCTAssertEqual(BluetoothAddress("C0-11-22-33-44-55")?.rawValue, 0xC011_2233_4455)
        XCTAssertEqual(BluetoothAddress("ff:FF:fF:Ff:00:00")?.rawValue, 0xFFFF_FFFF_0000)
        XCTAssertEqual(BluetoothAddress("C0:11:22:33:44:55")?.description, "C0:11:22:33:44:55")
        XCTAssertEqual(BluetoothAddress("xx C0:11:22:33:44:55".dropFirst(3))?.rawValue, 0xC011_2233_4455, "a Substring")
    }

    /// Runs of separators count as one, as splitting at them with empty parts dropped did;
    /// a part is two hex digits or, as `UInt8(_:radix:)` reads it, `+` and one.
    func testBluetoothAddressSeparatorRunsAndSigns() {
        XCTAssertEqual(BluetoothAddress(":C0:11:22:33:44:55:")?.rawValue, 0xC011_2233_4455)
        XCTAssertEqual(BluetoothAddress("C0::11-:22:33:44--55")?.rawValue, 0xC011_2233_4455)
        XCTAssertEqual(BluetoothAddress("C0:11:22:33:44:+5")?.rawValue, 0xC011_2233_4405)
    }

    func testMalformedBluetoothAddressesAreRefused() {
        for text in [
            "", "C0:11:22:33:44", "C0:11:22:33:44:55:66", "C0:11:22:33:44:5", "C0:11:22:33:44:555",
            "C01122334455", "C0:11:22:33:44:5G", "C0:11:22:33:44:55 ", " C0:11:22:33:44:55", "C0.11.22.33.44.55",
            "C0:11:22:33:44:é", "C0:11:22:33:44:5\u{301}", "C0:11:22:33:44:+", "C0:11:22:33:44:++", "C0:11:22:33:44:5+",
            ":::::", "0x:11:22:33:44:55",
        ] {
            XCTAssertNil(BluetoothAddress(text), text.debugDescription)
        }
    }

    func testLowercaseWritesWhatBytesReadsBack() {
        let bytes: [UInt8] = [0x00, 0x0F, 0x10, 0xA5, 0xFF]
        let text = HexText.lowercase(bytes)
        XCTAssertEqual(text, "000f10a5ff")
        XCTAssertEqual(Array(text.utf8).withUnsafeBufferPointer { HexText.bytes($0, byteCount: bytes.count) }, bytes)
        XCTAssertEqual(HexText.lowercase([]), "")
    }
}
