@testable import Advertisements
import HCI
import XCTest

/// Each identity key's text form: accepted values, case, separators, lengths, and the
/// error that names what was expected.
final class TagIdentityParsingTests: XCTestCase {
    private let uuidText = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    private let uuidBytes: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]

    private func parsed(_ key: String, _ value: String) -> TagIdentity? {
        try? TagIdentity.parse(key: key, value: value)
    }

    func testIBeacon() {
        XCTAssertEqual(parsed("ibeacon", "\(uuidText):100:1"), .iBeacon(uuid: uuidBytes, major: 100, minor: 1))
        XCTAssertEqual(parsed("ibeacon", "\(uuidText.uppercased()):0:65535"), .iBeacon(uuid: uuidBytes, major: 0, minor: 65535))
        XCTAssertEqual(parsed("ibeacon", "\(uuidText):007:+1"), .iBeacon(uuid: uuidBytes, major: 7, minor: 1),
                       "MAJOR and MINOR as UInt16(_:) reads them")
        for value in [
            "\(uuidText):100", "\(uuidText):100:1:2", "\(uuidText)::1", "\(uuidText):100:", ":100:1",
            "\(uuidText):65536:1", "\(uuidText):100:-1", "\(uuidText):1 :1", "\(uuidText):0x10:1",
            "e2c56db5dffb48d2b060d0f5a71096e0:100:1", "e2c56db5-dffb-48d2-b060-d0f5a71096e:100:1",
            "e2c56db5-dffb-48d2-b060-d0f5a71096e00:100:1", "e2c56db5-dffb-48d2-b060d-0f5a71096e0:100:1",
            "e2c56db5-dffb-48d2-b060-d0f5a71096eg:100:1", "e2c56db5_dffb_48d2_b060_d0f5a71096e0:100:1",
            "{e2c56db5-dffb-48d2-b060-d0f5a71096e0}:100:1", "e2c56db5-dffb-48d2-b060-d0f5a71096é:100:1", "",
        ] {
            XCTAssertNil(parsed("ibeacon", value), value)
        }
    }

    func testUUIDAlone() {
        XCTAssertEqual(TagIdentity.parseUUID(Substring(uuidText)), uuidBytes)
        XCTAssertEqual(TagIdentity.parseUUID(Substring("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")), uuidBytes)
        XCTAssertEqual(TagIdentity.formatUUID(uuidBytes), uuidText)
        XCTAssertNil(TagIdentity.parseUUID(Substring("e2c56db5-dffb-48d2-b060-d0f5a71096e0-")))
        XCTAssertNil(TagIdentity.parseUUID(Substring("e2c56db-5dffb-48d2-b060-d0f5a71096e0")), "a dash one place early")
        XCTAssertNil(TagIdentity.parseUUID(Substring("e2c56db5+dffb-48d2-b060-d0f5a71096e0")))
        XCTAssertNil(TagIdentity.parseUUID(Substring("")))
    }

    func testEddystoneUID() {
        let namespace: [UInt8] = [0xED, 0xD1, 0xEB, 0xEA, 0xC0, 0x4E, 0x5D, 0xEF, 0xA0, 0x17]
        let instance: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB]
        XCTAssertEqual(parsed("eddystone_uid", "edd1ebeac04e5defa017:0123456789ab"), .eddystoneUID(namespace: namespace, instance: instance))
        XCTAssertEqual(parsed("eddystone_uid", "EDD1EBEAC04E5DEFA017:0123456789AB"), .eddystoneUID(namespace: namespace, instance: instance))
        for value in [
            "edd1ebeac04e5defa0170123456789ab", "edd1ebeac04e5defa017:0123456789ab:", "edd1ebeac04e5defa01:0123456789ab",
            "edd1ebeac04e5defa017:0123456789a", "edd1ebeac04e5defa017:0123456789abc", "edd1ebeac04e5defa01g:0123456789ab",
            "edd1ebeac04e5defa017-0123456789ab", ":", "",
        ] {
            XCTAssertNil(parsed("eddystone_uid", value), value)
        }
    }

    func testAddressAndIRK() {
        XCTAssertEqual(parsed("address", "C0:11:22:33:44:55"), .address(BluetoothAddress(rawValue: 0xC011_2233_4455)))
        XCTAssertEqual(parsed("address", "c0-11-22-33-44-55"), .address(BluetoothAddress(rawValue: 0xC011_2233_4455)))
        XCTAssertNil(parsed("address", "C0:11:22:33:44"))
        let irk = "00112233445566778899AaBbCcDdEeFf"
        XCTAssertEqual(parsed("irk", irk), .irk([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]))
        for value in [String(irk.dropLast()), irk + "0", "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff", "0011223344556677889gaabbccddeeff"] {
            XCTAssertNil(parsed("irk", value), value)
        }
    }

    func testErrorsNameWhatWasExpected() {
        let cases: [(String, String)] = [
            ("ibeacon", #"ibeacon must be "UUID:MAJOR:MINOR" with a 36-character UUID and MAJOR, MINOR in 0…65535, e.g. "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1""#),
            ("eddystone_uid", #"eddystone_uid must be "NAMESPACE:INSTANCE" in hex, 20 and 12 digits, e.g. "edd1ebeac04e5defa017:0123456789ab""#),
            ("address", #"address must be a Bluetooth address "AA:BB:CC:DD:EE:FF""#),
            ("irk", "irk must be 32 hex digits (a 128-bit identity resolving key)"),
            ("mac", "mac is not a tag identity (use ibeacon, eddystone_uid, address or irk)"),
        ]
        for (key, message) in cases {
            XCTAssertThrowsError(try TagIdentity.parse(key: key, value: "nope")) { error in
                XCTAssertEqual("\(error)", message)
            }
        }
    }
}

extension TagIdentityParsingTests {
    /// The hand-written hash agrees with `==`: one identity however it was written is one
    /// key; identities differing in any field or kind are different keys.
    func testEqualIdentitiesHashEqual() throws {
        let pairs: [(String, String, String)] = [
            ("ibeacon", "\(uuidText):100:1", "\(uuidText.uppercased()):0100:+1"),
            ("eddystone_uid", "edd1ebeac04e5defa017:0123456789ab", "EDD1EBEAC04E5DEFA017:0123456789AB"),
            ("address", "C0:11:22:33:44:55", "c0-11-22-33-44-55"),
            ("irk", "00112233445566778899aabbccddeeff", "00112233445566778899AABBCCDDEEFF"),
        ]
        for (key, one, other) in pairs {
            let a = try TagIdentity.parse(key: key, value: one), b = try TagIdentity.parse(key: key, value: other)
            XCTAssertEqual(a, b)
            XCTAssertEqual(a.hashValue, b.hashValue, key)
        }
        let distinct: Set<TagIdentity> = [
            try TagIdentity.parse(key: "ibeacon", value: "\(uuidText):100:1"),
            try TagIdentity.parse(key: "ibeacon", value: "\(uuidText):1:100"),
            try TagIdentity.parse(key: "ibeacon", value: "\(uuidText):100:2"),
            try TagIdentity.parse(key: "eddystone_uid", value: "edd1ebeac04e5defa017:0123456789ab"),
            try TagIdentity.parse(key: "eddystone_uid", value: "edd1ebeac04e5defa017:0123456789ac"),
            try TagIdentity.parse(key: "address", value: "C0:11:22:33:44:55"),
            try TagIdentity.parse(key: "irk", value: "00112233445566778899aabbccddeeff"),
            .irk(uuidBytes), .iBeacon(uuid: uuidBytes, major: 100, minor: 1),
        ]
        XCTAssertEqual(distinct.count, 8, "the iBeacon written twice is one element, the rest are distinct")
    }
}
