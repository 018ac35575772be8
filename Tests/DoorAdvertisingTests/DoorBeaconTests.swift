import Advertisements
import DoorAdvertising
import XCTest

final class DoorBeaconTests: XCTestCase {
    private let uuid = UUID128(bigEndianBytes: [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2,
                                                0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0])!
    private let service = UUID128(bigEndianBytes: [0x27, 0xAD, 0xC9, 0xCA, 0x35, 0xEB, 0x46, 0x5A,
                                                   0x91, 0x54, 0xB8, 0xFF, 0x90, 0x76, 0xF3, 0xE8])!

    func testIBeaconAndServiceUUIDSplitIntoDataAndScanResponse() throws {
        let iBeacon = IBeacon(uuid: uuid, major: 10, minor: 0x0203, measuredPower: -59)
        let beacon = try XCTUnwrap(DoorBeacon(intervalMilliseconds: 200, iBeacon: iBeacon, serviceUUID: service))
        XCTAssertEqual(beacon.pduType, .scannable)
        XCTAssertEqual(Array(beacon.advertisingData.prefix(9)), [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15])
        XCTAssertEqual(beacon.advertisingData.count, 30)
        XCTAssertLessThanOrEqual(beacon.scanResponseData.count, 31)
        // The gateway's own decoder must read back what it advertises.
        let data = AdvertisingData(beacon.advertisingData[...])
        let decoded = data.compactMap { structure -> IBeacon? in
            guard structure.type == .manufacturerSpecificData,
                  case .iBeacon(let found) = IBeacon.decode(manufacturerData: structure.value) else { return nil }
            return found
        }
        XCTAssertEqual(decoded, [iBeacon])
        XCTAssertEqual(Array(beacon.scanResponseData.prefix(2)), [17, 0x07])
        XCTAssertEqual(UUID128(littleEndianBytes: beacon.scanResponseData.dropFirst(2)), service)
        XCTAssertEqual(beacon.scanResponseData[2], 0xE8, "on air least significant byte first")
    }

    func testOnlyOneItemIsNonConnectableWithEverythingInTheAdvertisingData() throws {
        let onlyService = try XCTUnwrap(DoorBeacon(intervalMilliseconds: 50, iBeacon: nil, serviceUUID: service))
        XCTAssertEqual(onlyService.pduType, .nonConnectable)
        XCTAssertTrue(onlyService.scanResponseData.isEmpty)
        XCTAssertEqual(onlyService.advertisingData.count, 3 + 18)
        XCTAssertEqual(onlyService.intervalMilliseconds, 50)
        XCTAssertFalse(onlyService.intervalWasClamped)
        XCTAssertNil(DoorBeacon(intervalMilliseconds: 200, iBeacon: nil, serviceUUID: nil))
    }

    func testIntervalIsInUnitsOfHalfAndAnEighthMillisecondsAndClampedPerPDUType() throws {
        let iBeacon = IBeacon(uuid: uuid, major: 1, minor: 1, measuredPower: -59)
        let normal = try XCTUnwrap(DoorBeacon(intervalMilliseconds: 200, iBeacon: iBeacon, serviceUUID: service))
        XCTAssertEqual(normal.intervalUnits, 320)
        let fast = try XCTUnwrap(DoorBeacon(intervalMilliseconds: 20, iBeacon: iBeacon, serviceUUID: service))
        XCTAssertEqual(fast.intervalMilliseconds, DoorBeacon.minimumScannableInterval)
        XCTAssertTrue(fast.intervalWasClamped)
        let fastNonConnectable = try XCTUnwrap(DoorBeacon(intervalMilliseconds: 5, iBeacon: iBeacon, serviceUUID: nil))
        XCTAssertEqual(fastNonConnectable.intervalUnits, 32)
        let slow = try XCTUnwrap(DoorBeacon(intervalMilliseconds: 99_999, iBeacon: iBeacon, serviceUUID: nil))
        XCTAssertEqual(slow.intervalUnits, 0x4000)
        XCTAssertTrue(slow.intervalWasClamped)
    }
}
