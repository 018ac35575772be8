import HCI
import XCTest

final class ScanResponseCommandTests: XCTestCase {
    func testLegacyScanResponseIsPaddedTo31BytesAndRoundTrips() throws {
        let data: [UInt8] = [0x11, 0x07] + Array(0 ..< 16)
        let packet = LESetScanResponseDataCommand(data: data).packet
        XCTAssertEqual(Array(packet.payload.prefix(4)), [0x09, 0x20, 32, UInt8(data.count)])
        XCTAssertEqual(packet.payload.count, 3 + 32)
        XCTAssertEqual(try LESetScanResponseDataCommand(packet: packet).data, data)
    }

    func testLegacyScanResponseRejectsALengthBeyond31() {
        var payload: [UInt8] = [0x09, 0x20, 32, 32]
        payload += repeatElement(0, count: 31)
        XCTAssertThrowsError(try LESetScanResponseDataCommand(packet: HCIPacket(type: .command, payload: payload)))
    }

    func testExtendedScanResponseRoundTripsAndRejectsALyingLength() throws {
        let command = LESetExtendedScanResponseDataCommand(handle: 0, data: [0x03, 0x03, 0xAA, 0xFE])
        let packet = command.packet
        XCTAssertEqual(Array(packet.payload.prefix(2)), [0x38, 0x20])
        XCTAssertEqual(try LESetExtendedScanResponseDataCommand(packet: packet), command)
        var lying = packet.payload
        lying[6] = 200  // data length larger than what follows
        XCTAssertThrowsError(try LESetExtendedScanResponseDataCommand(packet: HCIPacket(type: .command, payload: lying)))
    }
}
