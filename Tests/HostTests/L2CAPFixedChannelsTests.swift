import SplitMix
import XCTest
@testable import Host

final class L2CAPFixedChannelsTests: XCTestCase {
    private let handle: UInt16 = 0x0040

    private func frame(_ channel: L2CAPChannelID, _ payload: [UInt8]) -> L2CAPBasicFrame {
        L2CAPBasicFrame(connectionHandle: handle, channel: channel, payload: payload)
    }

    /// The payload of a `.send` on `channel`, after checking its basic header.
    private func sent(_ action: L2CAPFixedChannels.Action?, on channel: L2CAPChannelID) -> [UInt8]? {
        guard case .send(let h, let pdu)? = action, h == handle, pdu.count >= 4 else { return nil }
        XCTAssertEqual(Int(pdu[0]) | Int(pdu[1]) << 8, pdu.count - 4)
        XCTAssertEqual(UInt16(pdu[2]) | UInt16(pdu[3]) << 8, channel.rawValue)
        return Array(pdu[4...])
    }

    func testATTGoesToTheBearer() {
        var channels = L2CAPFixedChannels()
        XCTAssertEqual(channels.receive(frame(.attribute, [0x1B, 0x03, 0x00, 1])), [.attribute(handle: handle, pdu: [0x1B, 0x03, 0x00, 1])])
    }

    func testValidConnectionParameterUpdateIsAccepted() {
        var channels = L2CAPFixedChannels()
        // id 7, interval 24…40, latency 0, timeout 500 (5 s).
        let actions = channels.receive(frame(.leSignalling, [0x12, 0x07, 0x08, 0x00, 24, 0, 40, 0, 0, 0, 0xF4, 0x01]))
        XCTAssertEqual(sent(actions.first, on: .leSignalling), [0x13, 0x07, 0x02, 0x00, 0x00, 0x00])
        XCTAssertEqual(actions.last, .connectionParametersAccepted(handle: handle, ConnectionParameterRequest(
            intervalMin: 24, intervalMax: 40, peripheralLatency: 0, supervisionTimeout: 500)))
    }

    func testInvalidConnectionParametersAreRejected() {
        var channels = L2CAPFixedChannels()
        // min > max; then a timeout too short for the latency.
        for body: [UInt8] in [[40, 0, 24, 0, 0, 0, 0xF4, 0x01], [24, 0, 40, 0, 0xF3, 0x01, 10, 0]] {
            let actions = channels.receive(frame(.leSignalling, [0x12, 0x09, 0x08, 0x00] + body))
            XCTAssertEqual(actions.count, 1)
            XCTAssertEqual(sent(actions.first, on: .leSignalling), [0x13, 0x09, 0x02, 0x00, 0x01, 0x00])
        }
    }

    func testUnknownRequestsGetCommandRejectNotUnderstood() {
        var channels = L2CAPFixedChannels()
        let actions = channels.receive(frame(.leSignalling, [0x7F, 0x03, 0x01, 0x00, 0xAA]))
        XCTAssertEqual(sent(actions.first, on: .leSignalling), [0x01, 0x03, 0x02, 0x00, 0x00, 0x00])
        // Malformed length: not understood either.
        let short = channels.receive(frame(.leSignalling, [0x12, 0x04, 0x08, 0x00, 1, 2]))
        XCTAssertEqual(sent(short.first, on: .leSignalling), [0x01, 0x04, 0x02, 0x00, 0x00, 0x00])
        // Over the signalling MTU: MTU exceeded, with our MTU.
        let long = channels.receive(frame(.leSignalling, [0x12, 0x05, 0x18, 0x00] + Array(repeating: 0, count: 24)))
        XCTAssertEqual(sent(long.first, on: .leSignalling), [0x01, 0x05, 0x04, 0x00, 0x01, 0x00, 23, 0x00])
    }

    func testCreditBasedConnectionsAreRefusedAndDisconnectionsNameInvalidCIDs() {
        var channels = L2CAPFixedChannels()
        let credit = channels.receive(frame(.leSignalling, [0x14, 0x02, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x17, 0x00, 0x17, 0x00, 0x01, 0x00]))
        XCTAssertEqual(sent(credit.first, on: .leSignalling), [0x15, 0x02, 0x0A, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00])
        let disconnect = channels.receive(frame(.leSignalling, [0x06, 0x08, 0x04, 0x00, 0x41, 0x00, 0x42, 0x00]))
        XCTAssertEqual(sent(disconnect.first, on: .leSignalling), [0x01, 0x08, 0x06, 0x00, 0x02, 0x00, 0x41, 0x00, 0x42, 0x00])
    }

    func testResponsesAndBadIdentifiersAreIgnored() {
        var channels = L2CAPFixedChannels()
        XCTAssertEqual(channels.receive(frame(.leSignalling, [0x01, 0x03, 0x02, 0x00, 0x00, 0x00])), [])
        XCTAssertEqual(channels.receive(frame(.leSignalling, [0x13, 0x03, 0x02, 0x00, 0x00, 0x00])), [])
        XCTAssertEqual(channels.receive(frame(.leSignalling, [0x12, 0x00, 0x08, 0x00, 24, 0, 40, 0, 0, 0, 0xF4, 0x01])), [])
        XCTAssertEqual(channels.receive(frame(.leSignalling, [0x12, 0x01])), [])
        XCTAssertEqual(channels.counters.signallingIgnored, 2)
        XCTAssertEqual(channels.counters.malformedSignalling, 2)
    }

    func testPairingIsRefused() {
        var channels = L2CAPFixedChannels()
        let pairing = channels.receive(frame(.securityManager, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]))
        XCTAssertEqual(sent(pairing.first, on: .securityManager), [0x05, 0x05])
        let security = channels.receive(frame(.securityManager, [0x0B, 0x01]))
        XCTAssertEqual(sent(security.first, on: .securityManager), [0x05, 0x05])
        XCTAssertEqual(channels.receive(frame(.securityManager, [0x03] + Array(repeating: 0, count: 16))), [])
        XCTAssertEqual(channels.receive(frame(.securityManager, [])), [])
        XCTAssertEqual(channels.counters.pairingRefused, 2)
    }

    func testOtherChannelsAreDropped() {
        var channels = L2CAPFixedChannels()
        XCTAssertEqual(channels.receive(frame(L2CAPChannelID(rawValue: 0x0040), [1, 2, 3])), [])
        XCTAssertEqual(channels.receive(frame(L2CAPChannelID(rawValue: 0x0001), [1])), [])
        XCTAssertEqual(channels.counters.unknownChannelDropped, 2)
    }

    func testSeededFuzzOfSignallingNeverTraps() {
        var random = SplitMix64(seed: 5)
        var channels = L2CAPFixedChannels()
        for _ in 0 ..< 20_000 {
            var payload = [UInt8]()
            for _ in 0 ..< Int.random(in: 0 ... 30, using: &random) { payload.append(UInt8.random(in: 0 ... 255, using: &random)) }
            if !payload.isEmpty, Bool.random(using: &random) { payload[0] = [0x12, 0x14, 0x06, 0x01, 0x13][Int.random(in: 0 ..< 5, using: &random)] }
            let channel: L2CAPChannelID = [.leSignalling, .securityManager, .attribute][Int.random(in: 0 ..< 3, using: &random)]
            for action in channels.receive(frame(channel, payload)) {
                if case .send(_, let pdu) = action { XCTAssertLessThanOrEqual(pdu.count, 4 + 23) }
            }
        }
    }
}
