import XCTest
@testable import HCI

final class CommandCodecTests: XCTestCase {
    private func assertRoundTrip<C: HCICommand>(_ command: C, file: StaticString = #filePath, line: UInt = #line) {
        let packet = command.packet
        XCTAssertEqual(packet.type, .command, file: file, line: line)
        XCTAssertEqual(packet.payload.count - 3, Int(packet.payload[2]), "length byte", file: file, line: line)
        XCTAssertEqual(Opcode(rawValue: UInt16(packet.payload[0]) | UInt16(packet.payload[1]) << 8), C.opcode, file: file, line: line)
        XCTAssertEqual(C.opcode.expectedResponse, C.expectedResponse, "response table", file: file, line: line)
        do {
            let decoded = try C(packet: packet)
            XCTAssertEqual(decoded, command, file: file, line: line)
        } catch {
            XCTFail("\(C.self) did not decode: \(error)", file: file, line: line)
        }
        // Any truncation is a typed error, never a trap.
        for cut in 0 ..< packet.payload.count - 3 {
            let parameters = packet.payload[3 ..< 3 + cut]
            XCTAssertThrowsError(try C(parameters: parameters), "\(C.self) cut to \(cut)", file: file, line: line)
        }
    }

    func testEveryCommandRoundTrips() {
        let address = BluetoothAddress("C0:11:22:33:44:55")!
        assertRoundTrip(ResetCommand())
        assertRoundTrip(SetEventMaskCommand(mask: .gatewayDefault))
        assertRoundTrip(ReadLocalVersionInformationCommand())
        assertRoundTrip(ReadLocalSupportedCommandsCommand())
        assertRoundTrip(ReadLocalSupportedFeaturesCommand())
        assertRoundTrip(ReadBufferSizeCommand())
        assertRoundTrip(ReadBDAddrCommand())
        assertRoundTrip(ReadRSSICommand(connectionHandle: 0x0042))
        assertRoundTrip(DisconnectCommand(connectionHandle: 0x0001, reason: .remoteUserTerminated))
        assertRoundTrip(LESetEventMaskCommand(mask: .gatewayDefault))
        assertRoundTrip(LEReadBufferSizeCommand())
        assertRoundTrip(LEReadLocalSupportedFeaturesCommand())
        assertRoundTrip(LEReadSupportedStatesCommand())
        assertRoundTrip(LESetRandomAddressCommand(address: address))
        assertRoundTrip(LESetScanParametersCommand(scanType: .active, interval: 0x0690, window: 0x05E8))
        assertRoundTrip(LESetScanEnableCommand(enable: true, filterDuplicates: false))
        assertRoundTrip(LESetExtendedScanParametersCommand(le1M: .init(scanType: .passive, interval: 0x0690, window: 0x0690)))
        assertRoundTrip(LESetExtendedScanParametersCommand(
            le1M: .init(scanType: .active, interval: 100, window: 50), leCoded: .init(scanType: .passive, interval: 300, window: 150)
        ))
        assertRoundTrip(LESetExtendedScanEnableCommand(enable: true, filterDuplicates: 0, duration: 0, period: 0))
        assertRoundTrip(LEReadFilterAcceptListSizeCommand())
        assertRoundTrip(LEClearFilterAcceptListCommand())
        assertRoundTrip(LEAddDeviceToFilterAcceptListCommand(addressType: .randomDevice, address: address))
        assertRoundTrip(LERemoveDeviceFromFilterAcceptListCommand(addressType: .publicDevice, address: address))
        assertRoundTrip(LECreateConnectionCommand(filterPolicy: .filterAcceptList))
        assertRoundTrip(LECreateConnectionCommand(filterPolicy: .peerAddress, peerAddressType: .randomDevice, peerAddress: address))
        assertRoundTrip(LEExtendedCreateConnectionCommand(filterPolicy: .filterAcceptList))
        assertRoundTrip(LEExtendedCreateConnectionCommand(
            filterPolicy: .peerAddress, peerAddressType: .randomDevice, peerAddress: address,
            le1M: .init(), le2M: .init(scanInterval: 1, scanWindow: 1), leCoded: .init(scanInterval: 2, scanWindow: 2)
        ))
        assertRoundTrip(LECreateConnectionCancelCommand())
        assertRoundTrip(LESetAdvertisingParametersCommand(intervalMin: 320, intervalMax: 320, type: .nonConnectableUndirected))
        assertRoundTrip(LESetAdvertisingDataCommand(data: [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE]))
        assertRoundTrip(LESetAdvertisingEnableCommand(enable: true))
        assertRoundTrip(LESetExtendedAdvertisingParametersCommand(
            handle: 1, properties: [.legacy, .scannable], intervalMin: 0x0140, intervalMax: 0x01_0000, txPower: -8, sid: 3
        ))
        assertRoundTrip(LESetExtendedAdvertisingDataCommand(handle: 1, data: Array(0 ..< 40)))
        assertRoundTrip(LESetExtendedAdvertisingEnableCommand(enable: true, sets: [.init(handle: 1), .init(handle: 2, duration: 5, maxEvents: 9)]))
        assertRoundTrip(LESetExtendedAdvertisingEnableCommand(enable: false, sets: []))
    }

    func testKnownCommandBytes() {
        XCTAssertEqual(ResetCommand().packet.h4Bytes, [0x01, 0x03, 0x0C, 0x00])
        XCTAssertEqual(LESetScanEnableCommand(enable: true, filterDuplicates: false).packet.h4Bytes,
                       [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
        XCTAssertEqual(LESetScanParametersCommand(scanType: .passive, interval: 0x0010, window: 0x0010).packet.h4Bytes,
                       [0x01, 0x0B, 0x20, 0x07, 0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        XCTAssertEqual(LESetExtendedScanEnableCommand(enable: true).packet.h4Bytes,
                       [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00])
        XCTAssertEqual(LEAddDeviceToFilterAcceptListCommand(addressType: .randomDevice, address: BluetoothAddress("C0:11:22:33:44:55")!).packet.payload,
                       [0x11, 0x20, 0x07, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0])
        XCTAssertEqual(LESetAdvertisingDataCommand(data: [1, 2]).packet.payload.count, 3 + 32)
    }

    func testOpcodeFields() {
        XCTAssertEqual(Opcode.reset.rawValue, 0x0C03)
        XCTAssertEqual(Opcode.reset.ogf, 0x03)
        XCTAssertEqual(Opcode.reset.ocf, 0x0003)
        XCTAssertEqual(Opcode.leSetExtendedScanParameters.rawValue, 0x2041)
        XCTAssertEqual(Opcode.readBDAddr.rawValue, 0x1009)
        XCTAssertTrue(Opcode.leExtendedCreateConnection.isExtendedFamily)
        XCTAssertFalse(Opcode.leSetScanEnable.isExtendedFamily)
        XCTAssertTrue(Opcode.leSetScanEnable.isLegacyFamily)
        XCTAssertEqual(Opcode.readLocalSupportedCommands.returnParametersLength, 65)
        XCTAssertNil(Opcode.leCreateConnection.returnParametersLength)
    }

    func testWrongOpcodeAndLengthAreTypedErrors() {
        let packet = ResetCommand().packet
        XCTAssertThrowsError(try ReadBDAddrCommand(packet: packet)) { error in
            XCTAssertEqual(error as? HCIDecodingError, .opcodeMismatch(expected: .readBDAddr, actual: .reset))
        }
        var bad = LESetScanEnableCommand(enable: true).packet
        bad.payload[2] = 5
        XCTAssertThrowsError(try LESetScanEnableCommand(packet: bad))
        var extra = LESetScanEnableCommand(enable: true).packet
        extra.payload.append(0)
        extra.payload[2] += 1
        XCTAssertThrowsError(try LESetScanEnableCommand(packet: extra))
    }

    func testSuccessResponseHasTheReturnLengthOfEachOpcode() throws {
        let commands: [HCIPacket] = [
            ResetCommand().packet, ReadLocalSupportedCommandsCommand().packet, LEReadBufferSizeCommand().packet,
            LECreateConnectionCommand(filterPolicy: .filterAcceptList).packet,
        ]
        for command in commands {
            let opcode = try HCICommandPacket.split(command).0
            let response = try XCTUnwrap(HCIEvent.successResponse(to: command))
            switch try HCIEvent(response) {
            case .commandComplete(let complete):
                XCTAssertEqual(complete.opcode, opcode)
                XCTAssertEqual(complete.returnParameters.count, opcode.returnParametersLength)
                XCTAssertEqual(complete.status, .success)
            case .commandStatus(let status):
                XCTAssertEqual(status.opcode, opcode)
                XCTAssertEqual(opcode.expectedResponse, .commandStatus)
            default:
                XCTFail("unexpected \(response)")
            }
        }
    }
}
