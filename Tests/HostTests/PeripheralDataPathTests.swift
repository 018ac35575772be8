import EventLoop
import HCI
import XCTest
@testable import Host

/// Connections where we are the peripheral (a phone connected to enrolment's
/// advertising): ATT up for a GATT server, SMP and LE encryption up for the pairing
/// responder while pairing is delegated, refusals otherwise; central connections as before.
final class PeripheralDataPathTests: XCTestCase {
    private let phone: UInt16 = 0x0041
    private let tag: UInt16 = 0x0042

    private func ready() -> LEDataPath {
        var path = LEDataPath()
        _ = path.hostStateChanged(.scanning(ControllerInfo(leBuffer: ACLBufferInfo(packetLength: 27, packetCount: 4, isShared: false))))
        return path
    }

    private func completion(_ handle: UInt16, role: LEConnectionComplete.Role) -> LEConnectionComplete {
        LEConnectionComplete(connectionHandle: handle, role: role, peerAddressType: .randomDevice,
                             peerAddress: BluetoothAddress(rawValue: 0x7A_11_22_33_44_55), connectionInterval: 0x0018,
                             peripheralLatency: 0, supervisionTimeout: 0x01F4)
    }

    private func acl(_ handle: UInt16, _ channel: L2CAPChannelID, _ payload: [UInt8]) -> HCIPacket {
        let bytes = L2CAPBasicFrame(connectionHandle: handle, channel: channel, payload: payload).bytes
        return ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: bytes[...])
    }

    /// The L2CAP frame of a single `.sendACL`.
    private func sentFrame(_ actions: [LEDataPath.Action]) -> L2CAPBasicFrame? {
        guard actions.count == 1, case .sendACL(let packet) = actions[0], let (header, data) = try? ACLDataHeader.decode(packet.payload) else {
            return nil
        }
        var reassembler = ACLReassembler()
        return try? reassembler.receive(header, data: data)
    }

    func testDelegatedPeripheralConnectionHandsSMPAndEncryptionUp() throws {
        var path = ready()
        path.delegatesPeripheralPairing = true
        let complete = completion(phone, role: .peripheral)
        XCTAssertEqual(path.handle(.leMeta(.connectionComplete(complete)), now: .zero), [.peripheralConnected(complete)])
        XCTAssertTrue(path.isPeripheral(phone))
        XCTAssertEqual(path.peripheralParameters(phone), ConnectionParameterRequest(
            intervalMin: 0x18, intervalMax: 0x18, peripheralLatency: 0, supervisionTimeout: 0x01F4))

        let pairingRequest: [UInt8] = [0x01, 0x03, 0x00, 0x2D, 0x10, 0x02, 0x02]
        XCTAssertEqual(path.receiveACL(acl(phone, .securityManager, pairingRequest), now: .zero),
                       [.securityManager(handle: phone, pdu: pairingRequest)])
        let response: [UInt8] = [0x02, 0x03, 0x00, 0x09, 0x10, 0x02, 0x02]
        let frame = try XCTUnwrap(sentFrame(path.sendSecurityManager(response, on: phone)))
        XCTAssertEqual(frame.channel, .securityManager)
        XCTAssertEqual(frame.payload, response)

        let request = LELongTermKeyRequest(connectionHandle: phone)
        XCTAssertEqual(path.handle(.leMeta(.longTermKeyRequest(request)), now: .zero), [.longTermKeyRequested(request)])
        XCTAssertFalse(path.isEncrypted(phone))
        XCTAssertEqual(path.handle(.encryptionChange(HCIEncryptionChange(connectionHandle: phone, encryptionEnabled: 1)), now: .zero),
                       [.encryptionChanged(handle: phone, status: .success, enabled: true)])
        XCTAssertTrue(path.isEncrypted(phone))
        XCTAssertEqual(path.handle(.encryptionKeyRefreshComplete(HCIEncryptionKeyRefreshComplete(connectionHandle: phone)), now: .zero),
                       [.encryptionChanged(handle: phone, status: .success, enabled: true)])

        // The central asks to move the link: the controller's update is recorded.
        _ = path.handle(.leMeta(.connectionUpdateComplete(LEConnectionUpdateComplete(
            connectionHandle: phone, connectionInterval: 0x0028, peripheralLatency: 2, supervisionTimeout: 0x0100))), now: .zero)
        XCTAssertEqual(path.peripheralParameters(phone)?.intervalMin, 0x0028)
        XCTAssertEqual(path.peripheralParameters(phone)?.supervisionTimeout, 0x0100)

        // Supervision timeout: the link is gone, nothing more goes up or out.
        XCTAssertEqual(path.handle(.disconnectionComplete(HCIDisconnectionComplete(connectionHandle: phone, reason: .connectionTimeout)),
                                   now: .zero), [.connectionClosed(handle: phone, .disconnected(.connectionTimeout))])
        XCTAssertEqual(path.receiveACL(acl(phone, .securityManager, pairingRequest), now: .zero), [])
        XCTAssertEqual(path.sendSecurityManager(response, on: phone), [])
        XCTAssertEqual(path.handle(.leMeta(.longTermKeyRequest(request)), now: .zero), [.rejectLongTermKeyRequest(handle: phone)])
    }

    func testWithoutEnrolmentPairingIsRefusedAndKeysDenied() throws {
        var path = ready()
        _ = path.handle(.leMeta(.connectionComplete(completion(phone, role: .peripheral))), now: .zero)
        // Opening pairing later does not change a connection made before.
        path.delegatesPeripheralPairing = true
        let frame = try XCTUnwrap(sentFrame(path.receiveACL(acl(phone, .securityManager, [0x01, 0x03, 0x00, 0x2D, 0x10, 0x02, 0x02]),
                                                             now: .zero)))
        XCTAssertEqual(frame.channel, .securityManager)
        XCTAssertEqual(frame.payload, [0x05, 0x05], "Pairing Failed, Pairing Not Supported")
        XCTAssertEqual(path.sendSecurityManager([0x0B, 0x0D], on: phone), [], "no responder may speak on it")
        XCTAssertEqual(path.handle(.leMeta(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: phone))), now: .zero),
                       [.rejectLongTermKeyRequest(handle: phone)])
        // A request for a handle nobody knows is answered too: the controller waits for it.
        XCTAssertEqual(path.handle(.leMeta(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: 0x0EEE))), now: .zero),
                       [.rejectLongTermKeyRequest(handle: 0x0EEE)])
        XCTAssertEqual(path.counters.longTermKeyRequestsRejected, 2)
    }

    func testAttributeRequestsGoUpAndUnsolicitedPDUsAreDropped() throws {
        var path = ready()
        _ = path.handle(.leMeta(.connectionComplete(completion(phone, role: .peripheral))), now: .zero)
        let requests: [[UInt8]] = [
            [0x02, 0x00, 0x02], // Exchange MTU
            [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], // Read By Group Type
            [0x0A, 0x03, 0x00], // Read
            [0x52, 0x03, 0x00, 0x01], // Write Command
            [0x1E], // Handle Value Confirmation
            [0x7F, 0x00], // an opcode nobody defined: the server refuses it
        ]
        for pdu in requests {
            XCTAssertEqual(path.receiveACL(acl(phone, .attribute, pdu), now: .zero), [.attributeRequest(handle: phone, pdu: pdu)])
        }
        for pdu: [UInt8] in [[0x01, 0x0A, 0x03, 0x00, 0x0A], [0x0B, 1, 2], [0x1B, 0x03, 0x00, 1], [0x1D, 0x03, 0x00, 1], []] {
            XCTAssertEqual(path.receiveACL(acl(phone, .attribute, pdu), now: .zero), [], "\(pdu)")
        }
        XCTAssertEqual(path.counters.unsolicitedAttributePDUs, 5)

        // Where the GATT server is not there yet: Request Not Supported, commands unanswered.
        let answer = try XCTUnwrap(ATTErrorResponse.requestNotSupported(answering: requests[2]))
        XCTAssertEqual(answer, [0x01, 0x0A, 0x00, 0x00, 0x06])
        XCTAssertNil(ATTErrorResponse.requestNotSupported(answering: requests[3]))
        XCTAssertNil(ATTErrorResponse.requestNotSupported(answering: requests[4]))
        XCTAssertNil(ATTErrorResponse.requestNotSupported(answering: []))
        let frame = try XCTUnwrap(sentFrame(path.sendAttribute(answer, on: phone)))
        XCTAssertEqual(frame.channel, .attribute)
        XCTAssertEqual(frame.payload, answer)

        // A central asking us (the peripheral) for parameters is refused: only peripherals ask.
        let signalling = try XCTUnwrap(sentFrame(path.receiveACL(
            acl(phone, .leSignalling, [0x12, 0x07, 0x08, 0x00, 24, 0, 40, 0, 0, 0, 0xF4, 0x01]), now: .zero)))
        XCTAssertEqual(signalling.payload, [0x01, 0x07, 0x02, 0x00, 0x00, 0x00], "Command Reject, not understood")
    }

    func testCentralConnectionsKeepTheirBehaviour() throws {
        var path = ready()
        path.delegatesPeripheralPairing = true
        XCTAssertEqual(path.handle(.leMeta(.connectionComplete(completion(tag, role: .central))), now: .zero), [])
        XCTAssertFalse(path.isPeripheral(tag))
        XCTAssertNil(path.peripheralParameters(tag))
        // SMP is refused, the LTK denied, encryption changes stay inside, nothing goes up.
        let refusal = try XCTUnwrap(sentFrame(path.receiveACL(acl(tag, .securityManager, [0x0B, 0x0D]), now: .zero)))
        XCTAssertEqual(refusal.payload, [0x05, 0x05])
        XCTAssertEqual(path.handle(.leMeta(.longTermKeyRequest(LELongTermKeyRequest(connectionHandle: tag))), now: .zero),
                       [.rejectLongTermKeyRequest(handle: tag)])
        XCTAssertEqual(path.handle(.encryptionChange(HCIEncryptionChange(connectionHandle: tag, encryptionEnabled: 1)), now: .zero), [])
        XCTAssertEqual(path.sendAttribute([0x01, 0x0A, 0x00, 0x00, 0x06], on: tag), [], "the GATT server answers only peripheral links")
        // The peer's requests reach the client's bearer, which answers them itself.
        let answered = try XCTUnwrap(sentFrame(path.receiveACL(acl(tag, .attribute, [0x0A, 0x03, 0x00]), now: .zero)))
        XCTAssertEqual(answered.payload.first, ATTOpcode.errorResponse.rawValue)
    }

    func testAControllerResetClosesPeripheralConnections() {
        var path = ready()
        path.delegatesPeripheralPairing = true
        _ = path.handle(.leMeta(.connectionComplete(completion(phone, role: .peripheral))), now: .zero)
        XCTAssertEqual(path.hostStateChanged(.initializing), [.connectionClosed(handle: phone, .controllerReset)])
        XCTAssertFalse(path.isOpen(phone))
    }
}
