import XCTest
@testable import HCI

final class EventCodecTests: XCTestCase {
    private let tag = BluetoothAddress("C0:11:22:33:44:55")!

    private func assertRoundTrip(_ event: HCIEvent, file: StaticString = #filePath, line: UInt = #line) {
        let packet = event.packet
        XCTAssertEqual(Int(packet.payload[1]), packet.payload.count - 2, file: file, line: line)
        XCTAssertEqual(try HCIEvent(packet), event, file: file, line: line)
    }

    func testCommandCompleteForResetFromRealBytes() throws {
        let packet = HCIPacket(type: .event, payload: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        let event = try HCIEvent(packet)
        XCTAssertEqual(event, .commandComplete(HCICommandComplete(numberOfCommandPackets: 1, opcode: .reset, returnParameters: [0x00])))
        XCTAssertEqual(event.packet, packet)
        XCTAssertEqual(event.numberOfCommandPackets, 1)
    }

    func testCommandStatusFromRealBytes() throws {
        // Command Status, pending (0), 1 credit, LE Create Connection.
        let event = try HCIEvent(HCIPacket(type: .event, payload: [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20]))
        XCTAssertEqual(event, .commandStatus(HCICommandStatus(status: .success, numberOfCommandPackets: 1, opcode: .leCreateConnection)))
    }

    func testLegacyAdvertisingReportFromRealBytes() throws {
        // One ADV_NONCONN_IND from C0:11:22:33:44:55 (random) with flags + 4 bytes of
        // manufacturer data, RSSI -61.
        let payload: [UInt8] = [
            0x3E, 0x16, 0x02, 0x01,
            0x03, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0,
            0x0A, 0x02, 0x01, 0x06, 0x06, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0x00,
            0xC3,
        ]
        XCTAssertEqual(payload.count - 2, 0x16)
        guard case .leMeta(.advertisingReport(let reports)) = try HCIEvent(HCIPacket(type: .event, payload: payload)) else {
            return XCTFail("not an advertising report")
        }
        XCTAssertEqual(reports.count, 1)
        let report = reports[0]
        XCTAssertEqual(report.address, tag)
        XCTAssertEqual(report.addressType, .randomDevice)
        XCTAssertEqual(report.rssi, -61)
        XCTAssertEqual(report.properties, [.legacy])
        XCTAssertFalse(report.isConnectable)
        XCTAssertEqual(Array(report.data), [0x02, 0x01, 0x06, 0x06, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0x00])
        XCTAssertEqual(report.data.startIndex, 13, "a slice of the packet, not a copy")
        XCTAssertEqual(report.dataStatus, .complete)
    }

    func testEveryEventRoundTrips() {
        let legacy = [
            LEAdvertisingReport(properties: [.legacy, .connectable, .scannable], addressType: .randomDevice, address: tag, rssi: -40, data: [1, 2, 3]),
            LEAdvertisingReport(properties: [.legacy, .scannable, .scanResponse], addressType: .publicDevice, address: tag, rssi: nil, data: []),
            LEAdvertisingReport(properties: [.legacy, .connectable, .directed], addressType: .publicDevice, address: tag, rssi: -127, data: []),
            LEAdvertisingReport(properties: [.legacy, .scannable], addressType: .randomDevice, address: tag, rssi: 20, data: ArraySlice(0 ..< 31)),
            LEAdvertisingReport(properties: [.legacy], addressType: .randomDevice, address: tag, rssi: -90, data: [9]),
        ]
        let extended = [
            LEAdvertisingReport(properties: [.connectable], dataStatus: .incompleteMoreToCome, addressType: .randomDevice, address: tag,
                                primaryPHY: .leCoded, secondaryPHY: .le2M, sid: 4, txPower: -8, rssi: -70,
                                periodicAdvertisingInterval: 80, data: ArraySlice(0 ..< 200)),
            LEAdvertisingReport(properties: [.directed, .connectable], dataStatus: .incompleteTruncated, addressType: .publicDevice,
                                address: tag, sid: nil, txPower: nil, rssi: nil, directAddressType: .randomDevice,
                                directAddress: BluetoothAddress(rawValue: 0x1234), data: [7]),
            LEAdvertisingReport(properties: [.legacy, .connectable, .scannable], addressType: .anonymous, address: BluetoothAddress(rawValue: 0),
                                rssi: -1, data: []),
        ]
        assertRoundTrip(.commandComplete(HCICommandComplete(numberOfCommandPackets: 0, opcode: .noOperation, returnParameters: [])))
        assertRoundTrip(.commandComplete(HCICommandComplete(numberOfCommandPackets: 5, opcode: .readBDAddr, returnParameters: [0, 1, 2, 3, 4, 5, 6])))
        assertRoundTrip(.commandStatus(HCICommandStatus(status: .commandDisallowed, numberOfCommandPackets: 1, opcode: .leExtendedCreateConnection)))
        assertRoundTrip(.disconnectionComplete(HCIDisconnectionComplete(connectionHandle: 0x0040, reason: .connectionTimeout)))
        assertRoundTrip(.numberOfCompletedPackets([HCICompletedPackets(connectionHandle: 1, count: 2), HCICompletedPackets(connectionHandle: 0x0EFF, count: 65535)]))
        assertRoundTrip(.numberOfCompletedPackets([]))
        assertRoundTrip(.hardwareError(code: 0x42))
        assertRoundTrip(.leMeta(.advertisingReport(legacy)))
        assertRoundTrip(.leMeta(.extendedAdvertisingReport(Array(extended.prefix(1)))))
        assertRoundTrip(.leMeta(.extendedAdvertisingReport(Array(extended.suffix(2)))))
        for format in [LEConnectionComplete.Format.legacy, .enhanced, .enhancedV2] {
            assertRoundTrip(.leMeta(.connectionComplete(LEConnectionComplete(
                format: format, status: .success, connectionHandle: 0x0041, role: .central, peerAddressType: .randomDevice,
                peerAddress: tag, localResolvablePrivateAddress: format == .legacy ? BluetoothAddress(rawValue: 0) : BluetoothAddress(rawValue: 0x4000_0000_0001),
                peerResolvablePrivateAddress: format == .legacy ? BluetoothAddress(rawValue: 0) : BluetoothAddress(rawValue: 0x4000_0000_0002),
                connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 500, centralClockAccuracy: 1,
                advertisingHandle: format == .enhancedV2 ? 3 : 0xFF, syncHandle: format == .enhancedV2 ? 0x0101 : 0xFFFF
            ))))
        }
        assertRoundTrip(.leMeta(.connectionComplete(LEConnectionComplete(status: .connectionFailedToBeEstablished, connectionHandle: 0, peerAddressType: .publicDevice, peerAddress: tag))))
        assertRoundTrip(.leMeta(.connectionUpdateComplete(LEConnectionUpdateComplete(connectionHandle: 2, connectionInterval: 40, peripheralLatency: 4, supervisionTimeout: 600))))
        assertRoundTrip(.leMeta(.unknown(subevent: .phyUpdateComplete, parameters: [0, 1, 0, 2, 2])))
        assertRoundTrip(.unknown(code: .dataBufferOverflow, parameters: [1]))
        assertRoundTrip(.encryptionChange(HCIEncryptionChange(connectionHandle: 1, encryptionEnabled: 1)))
    }

    func testMalformedEventsAreTypedErrors() {
        func decode(_ payload: [UInt8]) -> HCIDecodingError? {
            do {
                _ = try HCIEvent(HCIPacket(type: .event, payload: payload))
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(decode([0x0E]), .truncated(.packetHeader, needed: 2, available: 1))
        XCTAssertEqual(decode([0x0E, 0x05, 0x01, 0x03, 0x0C, 0x00]), .lengthMismatch(.event(.commandComplete), declared: 5, actual: 4))
        XCTAssertEqual(decode([0x0E, 0x02, 0x01, 0x03]), .truncated(.event(.commandComplete), needed: 2, available: 1))
        // Two reports announced, bytes for one.
        let one: [UInt8] = [0x03, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x01, 0xAA, 0xC3]
        var twoAnnounced: [UInt8] = [0x3E, UInt8(2 + one.count), 0x02, 0x02] + one
        XCTAssertEqual(decode(twoAnnounced), .countDoesNotFit(.leSubevent(.advertisingReport), count: 2))
        // Data length running past the end.
        twoAnnounced = [0x3E, UInt8(2 + one.count), 0x02, 0x01] + one
        twoAnnounced[12] = 0x05
        XCTAssertEqual(decode(twoAnnounced), .dataRunsPastEnd(.leSubevent(.advertisingReport), report: 0))
        // Trailing byte after the last report.
        let trailing: [UInt8] = [0x3E, UInt8(3 + one.count), 0x02, 0x01] + one + [0x00]
        XCTAssertEqual(decode(trailing), .trailingBytes(.leSubevent(.advertisingReport), count: 1))
        // Reserved legacy event type.
        var reserved: [UInt8] = [0x3E, UInt8(2 + one.count), 0x02, 0x01] + one
        reserved[4] = 0x07
        XCTAssertEqual(decode(reserved), .invalidValue(.leSubevent(.advertisingReport), field: .legacyEventType, value: 7))
        // Zero reports.
        XCTAssertEqual(decode([0x3E, 0x02, 0x0D, 0x00]), .countDoesNotFit(.leSubevent(.extendedAdvertisingReport), count: 0))
        // Completed-packets count that does not fit.
        XCTAssertEqual(decode([0x13, 0x05, 0x02, 0x01, 0x00, 0x01, 0x00]), .countDoesNotFit(.event(.numberOfCompletedPackets), count: 2))
        XCTAssertThrowsError(try HCIEvent(HCIPacket(type: .acl, payload: [0, 0, 0, 0])))
    }

    func testForEachReportSeesTheSameReportsAsTheArray() throws {
        let reports = (0 ..< 6).map { index in
            LEAdvertisingReport(properties: [.connectable], addressType: .randomDevice, address: BluetoothAddress(rawValue: UInt64(index)),
                                sid: UInt8(index), rssi: Int8(-index), data: ArraySlice(repeatElement(UInt8(index), count: index * 3)))
        }
        let packet = HCIEvent.leMeta(.extendedAdvertisingReport(reports)).packet
        var seen = [LEAdvertisingReport]()
        packet.payload[3...].withUnsafeBufferPointer { parameters in
            LEAdvertisingReportView.forEach(subevent: .extendedAdvertisingReport, parameters: parameters) { seen.append($0.makeReport()) }
        }
        XCTAssertEqual(seen, reports)
    }
}
