import XCTest
@testable import HCI

/// LE encryption as the peripheral: the LTK request, the two replies, Encryption Change
/// (v1, v2) and Key Refresh Complete, against their Core Vol 4 Part E layouts.
final class EncryptionCodecTests: XCTestCase {
    private func event(_ hex: String) throws -> HCIEvent {
        try HCIEvent(HCIPacket(type: .event, payload: GoldenBytesTests.bytes(hex)))
    }

    func testLongTermKeyRequestFromSpecLayout() throws {
        // Subevent 0x05, handle 0x0041 (flag bits set above the 12-bit handle), Rand, EDIV.
        let decoded = try event("3e0d05" + "4120" + "0807060504030201" + "cdab")
        XCTAssertEqual(decoded, .leMeta(.longTermKeyRequest(LELongTermKeyRequest(
            connectionHandle: 0x0041, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0xABCD))))
        let secure = try event("3e0d05" + "4000" + "0000000000000000" + "0000")
        XCTAssertEqual(secure, .leMeta(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: 0x0040))))
        XCTAssertEqual(secure.packet.payload.hex, "3e0d05400000000000000000000000")
        XCTAssertTrue(LEEventMask.gatewayDefault.contains(.longTermKeyRequest), "the host answers every request, so it must see them")
        XCTAssertEqual(LEEventMask.longTermKeyRequest.rawValue, 1 << 4)
    }

    func testEncryptionChangeBothVersionsAndKeyRefresh() throws {
        let on = try event("08040040000" + "1")
        XCTAssertEqual(on, .encryptionChange(HCIEncryptionChange(connectionHandle: 0x0040, encryptionEnabled: 1)))
        guard case .encryptionChange(let change) = on else { return XCTFail("not an encryption change") }
        XCTAssertTrue(change.isEnabled)
        XCTAssertEqual(change.format, .v1)

        let v2 = try event("5905" + "00" + "4200" + "01" + "10")
        XCTAssertEqual(v2, .encryptionChange(HCIEncryptionChange(
            format: .v2, connectionHandle: 0x0042, encryptionEnabled: 1, encryptionKeySize: 16)))
        XCTAssertEqual(v2.packet.payload.hex, "590500420001" + "10")

        let failed = try event("0804" + "06" + "4300" + "00")
        guard case .encryptionChange(let refused) = failed else { return XCTFail("not an encryption change") }
        XCTAssertEqual(refused.status, HCIStatus(rawValue: 0x06), "PIN or key missing")
        XCTAssertFalse(refused.isEnabled)

        XCTAssertEqual(try event("3003004000"), .encryptionKeyRefreshComplete(HCIEncryptionKeyRefreshComplete(connectionHandle: 0x0040)))
        XCTAssertTrue(EventMask.gatewayDefault.contains([.encryptionChange, .encryptionKeyRefreshComplete]))
    }

    func testRepliesEncodeToTheSpecLayoutAndKeepTheKeyOutOfText() throws {
        let key = try XCTUnwrap(LongTermKeyOctets(leastSignificantFirst: Array(0xA0 ..< 0xB0)))
        let reply = LELongTermKeyRequestReplyCommand(connectionHandle: 0x0040, longTermKey: key)
        XCTAssertEqual(reply.packet.payload.hex, "1a2012" + "4000" + "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")
        XCTAssertEqual(try LELongTermKeyRequestReplyCommand(packet: reply.packet), reply)
        for text in [String(describing: reply), String(reflecting: reply), String(describing: key), String(reflecting: key)] {
            XCTAssertFalse(text.lowercased().contains("a0") || text.contains("160"), text)
        }
        var dumped = ""
        dump(reply, to: &dumped)
        XCTAssertFalse(dumped.contains("160") || dumped.contains("175"), dumped)
        XCTAssertNil(LongTermKeyOctets(leastSignificantFirst: Array(repeating: 1, count: 15)))
        XCTAssertNil(LongTermKeyOctets(leastSignificantFirst: Array(repeating: 1, count: 17)))

        let negative = LELongTermKeyRequestNegativeReplyCommand(connectionHandle: 0x0041)
        XCTAssertEqual(negative.packet.payload.hex, "1b2002" + "4100")
        XCTAssertEqual(Opcode.leLongTermKeyRequestReply.rawValue, 0x201A)
        XCTAssertEqual(Opcode.leLongTermKeyRequestNegativeReply.rawValue, 0x201B)
        XCTAssertEqual(Opcode.leLongTermKeyRequestReply.expectedResponse, .commandComplete(returnParametersLength: 3))
        XCTAssertEqual(Opcode.leLongTermKeyRequestNegativeReply.expectedResponse, .commandComplete(returnParametersLength: 3))

        let complete = HCICommandComplete(opcode: .leLongTermKeyRequestNegativeReply, returnParameters: [0x00, 0x41, 0x00])
        XCTAssertEqual(try complete.decode(LELongTermKeyRequestNegativeReplyReturn.self),
                       LELongTermKeyRequestNegativeReplyReturn(connectionHandle: 0x0041))
        XCTAssertThrowsError(try complete.decode(LELongTermKeyRequestReplyReturn.self), "the opcode is checked")
    }

    func testMalformedInputIsATypedError() {
        // Truncated LTK request (EDIV missing), Encryption Change without its enable
        // byte, v2 without the key size, key refresh without a handle.
        for hex in ["3e0b05" + "4000" + "0000000000000000", "0803004000", "590400400001", "300100"] {
            XCTAssertThrowsError(try event(hex), hex) { error in
                guard case HCIDecodingError.truncated = error else { return XCTFail("\(hex): \(error)") }
            }
        }
        // A length byte that disagrees with the bytes.
        XCTAssertThrowsError(try event("0805004000" + "01"))
        // Commands decode exactly: a reply with a key one octet short or long is refused.
        for hex in ["1a2011" + "4000" + String(repeating: "00", count: 15), "1a2013" + "4000" + String(repeating: "00", count: 17),
                    "1b2003" + "400000", "1b2001" + "40"] {
            XCTAssertThrowsError(try LELongTermKeyRequestReplyCommand(packet: HCIPacket(type: .command, payload: GoldenBytesTests.bytes(hex)))
                .connectionHandle, hex)
        }
        XCTAssertThrowsError(try LELongTermKeyRequestNegativeReplyCommand(
            packet: HCIPacket(type: .command, payload: GoldenBytesTests.bytes("1b2003400000"))))
        // Trailing bytes on events are tolerated (later versions append fields).
        XCTAssertEqual(try? event("0805004000" + "01ff"), .encryptionChange(HCIEncryptionChange(connectionHandle: 0x0040, encryptionEnabled: 1)))
    }

    func testSupportedStatesForEnrolment() {
        // Bumble's virtual controller: 0xffff3fffff030000, least significant byte first.
        let bumble = LESupportedStates(rawValue: 0x0000_03FF_FF3F_FFFF)
        XCTAssertTrue(bumble.canAdvertiseConnectableWhileInitiating)
        XCTAssertTrue(bumble.canAdvertiseConnectableWhileScanning(active: true))
        XCTAssertFalse(LESupportedStates.assumedWhenUnknown.canAdvertiseConnectableWhileInitiating)
        XCTAssertEqual(LESupportedStates.connectableAdvertisingAndInitiating.rawValue, 1 << 32)
        XCTAssertEqual(LESupportedStates.connectableAdvertisingAndPassiveScanning.rawValue, 1 << 10)
    }
}
