@testable import Agent
import Config
import DoorAdvertising
import XCTest

final class DoorBeaconConfigurationTests: XCTestCase {
    func testAdvertiseSectionBecomesTheBeacon() throws {
        let uuid: [UInt8] = Array(0xE0 ... 0xEF)
        let service: [UInt8] = Array(0x10 ... 0x1F)
        let advertise = GatewayConfiguration.Advertise(
            intervalMilliseconds: 250, iBeacon: .init(uuid: uuid, major: 7, minor: 9), serviceUUID: service, measuredPower: -65
        )
        let beacon = try XCTUnwrap(DoorBeacon(advertise))
        XCTAssertEqual(beacon.intervalMilliseconds, 250)
        XCTAssertEqual(Array(beacon.advertisingData[9 ..< 25]), uuid)
        XCTAssertEqual(Array(beacon.advertisingData.suffix(5)), [0, 7, 0, 9, UInt8(bitPattern: -65)])
        XCTAssertEqual(Array(beacon.scanResponseData.dropFirst(2)), service.reversed())
        XCTAssertNil(DoorBeacon(GatewayConfiguration.Advertise(iBeacon: nil, serviceUUID: nil)))
    }
}
