import XCTest
@testable import Host

final class GATTUUIDTests: XCTestCase {
    func testSixteenBitUUIDsUseTheBaseAndTheShortForm() {
        let characteristic = GATTUUID.characteristic
        XCTAssertEqual(characteristic.description, "00002803-0000-1000-8000-00805f9b34fb")
        XCTAssertEqual(characteristic.uuid16, 0x2803)
        XCTAssertEqual(characteristic.attBytes, [0x03, 0x28])
        XCTAssertEqual(GATTUUID(littleEndian: [0x03, 0x28]), characteristic)
    }

    func testFullUUIDsTravelLittleEndian() {
        let service = TestUUIDs.service
        XCTAssertEqual(service.description, "327c0001-652e-44d5-b154-9f067567c974")
        XCTAssertNil(service.uuid16)
        XCTAssertEqual(service.attBytes.first, 0x74)
        XCTAssertEqual(service.attBytes.last, 0x32)
        XCTAssertEqual(GATTUUID(littleEndian: service.attBytes[...]), service)
        XCTAssertNil(GATTUUID(littleEndian: [1, 2, 3]))
        XCTAssertNil(GATTUUID(bytes: [1, 2]))
    }
}
