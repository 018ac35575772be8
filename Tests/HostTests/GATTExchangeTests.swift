import EventLoop
import XCTest
@testable import Host

/// The write-then-read exchange against scripted peers, friendly and hostile.
final class GATTExchangeTests: XCTestCase {
    func testDiscoveryWriteAndReadAgainstAWellBehavedServer() throws {
        let server = FakeGATTServer()
        var harness = ExchangeHarness(request: ExchangeHarness.request(), peer: server.answer)
        harness.run()
        let completion = try XCTUnwrap(harness.completion, "\(String(describing: harness.result))")
        XCTAssertEqual(completion.handles, .init(write: 0x0012, read: 0x0014))
        XCTAssertEqual(completion.value, Array((1 ... 17).reversed()))
        XCTAssertFalse(completion.usedCache)
        // Find By Type Value, two Read By Type (stops once both are seen), write, read.
        XCTAssertEqual(completion.attRequests, 5)
        XCTAssertEqual(server.requests.map { $0[0] }, [0x06, 0x08, 0x08, 0x12, 0x0A])
        XCTAssertEqual(completion.timings.discovery, .milliseconds(90))
        XCTAssertEqual(completion.timings.write, .milliseconds(30))
        XCTAssertEqual(completion.timings.read, .milliseconds(30))
        XCTAssertEqual(harness.disconnects, [])
        // The Find By Type Value request carries the 128-bit UUID little-endian and fills the MTU.
        XCTAssertEqual(server.requests[0].count, 23)
        XCTAssertEqual(Array(server.requests[0][7...]), TestUUIDs.service.bytes.reversed())
        XCTAssertEqual(server.requests[3], [0x12, 0x12, 0x00] + Array(1 ... 17))
    }

    func testCachedHandlesTakeExactlyTwoRoundTrips() throws {
        let server = FakeGATTServer()
        var harness = ExchangeHarness(request: ExchangeHarness.request(cached: .init(write: 0x12, read: 0x14)), peer: server.answer)
        harness.run()
        let completion = try XCTUnwrap(harness.completion)
        XCTAssertEqual(completion.attRequests, 2)
        XCTAssertEqual(server.requests.map { $0[0] }, [0x12, 0x0A])
        XCTAssertTrue(completion.usedCache)
        XCTAssertEqual(completion.timings.discovery, .zero)
    }

    func testMissingServiceAndCharacteristic() {
        let noService = FakeGATTServer()
        noService.serviceUUID = TestUUIDs.other
        var harness = ExchangeHarness(request: ExchangeHarness.request(), peer: noService.answer)
        harness.run()
        XCTAssertEqual(harness.failure, .serviceMissing)

        let noResponse = FakeGATTServer()
        noResponse.characteristics.removeLast()
        harness = ExchangeHarness(request: ExchangeHarness.request(), peer: noResponse.answer)
        harness.run()
        XCTAssertEqual(harness.failure, .characteristicMissing)
        XCTAssertEqual(harness.disconnects, [])
    }

    func testSixteenBitCharacteristicsAreSkipped() throws {
        let server = FakeGATTServer()
        server.service.end = 0x0020
        server.characteristics.insert(.init(declaration: 0x0011, properties: 0x02, value: 0x0012, uuid: GATTUUID(uuid16: 0x2A19)), at: 0)
        server.characteristics[1].declaration = 0x0013
        server.characteristics[1].value = 0x0014
        server.characteristics[2].declaration = 0x0015
        server.characteristics[2].value = 0x0016
        var harness = ExchangeHarness(request: ExchangeHarness.request(), peer: server.answer)
        harness.run()
        XCTAssertEqual(harness.completion?.handles, .init(write: 0x0014, read: 0x0016))
    }

    func testErrorResponseToTheWriteIsATypedFailureAndKeepsTheBearer() {
        let server = FakeGATTServer()
        var harness = ExchangeHarness(request: ExchangeHarness.request(cached: .init(write: 0x0099, read: 0x0014)), peer: server.answer)
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.attError(request: .writeRequest, handle: 0x0099, code: .invalidHandle)))
        XCTAssertEqual(harness.disconnects, [])
        XCTAssertFalse(harness.client.bearer.isClosed)
    }

    func testSilentPeerTimesOutAndTheBearerIsDisconnected() {
        let configuration = GATTClient.Configuration(bearer: .init(operationTimeout: .seconds(5)))
        var harness = ExchangeHarness(request: ExchangeHarness.request(), configuration: configuration) { _ in nil }
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.timeout))
        XCTAssertEqual(harness.disconnects, [.timeout])
        XCTAssertEqual(harness.now, Instant.zero + .seconds(5))
        XCTAssertTrue(harness.client.bearer.isClosed)
    }

    func testOperationTimeoutNeverExceedsTheThirtySecondTransactionRule() {
        let configuration = GATTClient.Configuration(bearer: .init(operationTimeout: .seconds(120)))
        var harness = ExchangeHarness(request: ExchangeHarness.request()) { _ in nil }
        harness.client = GATTClient(configuration: configuration)
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.timeout))
        XCTAssertEqual(harness.now, Instant.zero + .seconds(30))
        XCTAssertEqual(harness.disconnects, [.timeout])
    }

    func testWrongOpcodeResponseClosesTheBearer() {
        var harness = ExchangeHarness(request: ExchangeHarness.request()) { _ in [[0x0B, 1, 2, 3]] }
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.protocolViolation(.wrongOpcode(expected: .findByTypeValueResponse, actual: .readResponse))))
        XCTAssertEqual(harness.disconnects.count, 1)
    }

    func testTruncatedAndMalformedResponsesCloseTheBearer() {
        let scripts: [([UInt8]) -> [[UInt8]]?] = [
            { _ in [[0x07, 0x10]] },                       // truncated handle pair
            { _ in [[0x07, 0x10, 0x00, 0x05, 0x00]] },       // group end before start
            { _ in [[0x01, 0x06, 0x01]] },                   // truncated error response
            { _ in [[0x01, 0x0A, 0x01, 0x00, 0x0A]] },       // error for another request
        ]
        for script in scripts {
            var harness = ExchangeHarness(request: ExchangeHarness.request(), peer: script)
            harness.run()
            guard case .gatt(.protocolViolation)? = harness.failure else {
                XCTFail("\(String(describing: harness.result))")
                continue
            }
            XCTAssertEqual(harness.disconnects.count, 1)
        }
    }

    func testOversizedResponseClosesTheBearer() {
        let server = FakeGATTServer()
        var harness = ExchangeHarness(request: ExchangeHarness.request(cached: .init(write: 0x12, read: 0x14))) { pdu in
            pdu.first == 0x0A ? [[0x0B] + Array(repeating: 0xEE, count: 400)] : server.answer(pdu)
        }
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.protocolViolation(.oversized(401))))
    }

    func testMalformedCharacteristicListsCloseTheBearer() {
        let bad: [[UInt8]] = [
            [0x09, 0x15, 0x11, 0x00, 0x08],                                // length 21, 3 bytes
            [0x09, 0x06, 0x11, 0x00, 0x08, 0x12, 0x00, 0x01],               // unsupported entry length
            [0x09, 0x07, 0x11, 0x00, 0x08, 0x12, 0x00, 0x19, 0x2A, 0x00],   // trailing byte
            [0x09, 0x07, 0x05, 0x00, 0x08, 0x06, 0x00, 0x19, 0x2A],         // before the service range
            [0x09, 0x07, 0x11, 0x00, 0x08, 0x11, 0x00, 0x19, 0x2A],         // value handle not after declaration
            [0x09, 0x07, 0x13, 0x00, 0x08, 0x14, 0x00, 0x19, 0x2A, 0x11, 0x00, 0x08, 0x12, 0x00, 0x19, 0x2A], // decreasing
        ]
        for response in bad {
            let server = FakeGATTServer()
            var harness = ExchangeHarness(request: ExchangeHarness.request()) { pdu in
                pdu.first == 0x08 ? [response] : server.answer(pdu)
            }
            harness.run()
            guard case .gatt(.protocolViolation)? = harness.failure else {
                XCTFail("\(response): \(String(describing: harness.result))")
                continue
            }
            XCTAssertEqual(harness.disconnects.count, 1)
        }
    }

    func testEndlessCharacteristicListIsBounded() {
        let server = FakeGATTServer()
        server.service = GATTHandleRange(start: 0x0001, end: 0xFFFF)
        var harness = ExchangeHarness(request: ExchangeHarness.request(), configuration: .init(maxDiscoveryRequests: 32)) { pdu in
            guard pdu.first == 0x08 else { return server.answer(pdu) }
            // Always one more unrelated 16-bit characteristic just after the start asked for.
            let start = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
            return [[0x09, 0x07, UInt8(start & 0xFF), UInt8(start >> 8), 0x02,
                     UInt8((start + 1) & 0xFF), UInt8((start + 1) >> 8), 0x19, 0x2A]]
        }
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.protocolViolation(.endlessResponses(requests: 32))))
        XCTAssertEqual(harness.sent.filter { $0.first == 0x08 }.count, 32)
        XCTAssertEqual(harness.disconnects.count, 1)
    }

    func testRepeatedCharacteristicsCannotLoop() {
        let server = FakeGATTServer()
        // A peer answering every Read By Type with the same first declaration.
        var harness = ExchangeHarness(request: ExchangeHarness.request()) { pdu in
            pdu.first == 0x08 ? [[0x09, 0x07, 0x11, 0x00, 0x08, 0x12, 0x00, 0x19, 0x2A]] : server.answer(pdu)
        }
        harness.run()
        XCTAssertEqual(harness.failure, .gatt(.protocolViolation(.outOfOrder(.readByTypeResponse))))
        XCTAssertEqual(harness.sent.filter { $0.first == 0x08 }.count, 2)
    }

    func testNotificationsAndIndicationsInterleavedAreTolerated() throws {
        let server = FakeGATTServer()
        var harness = ExchangeHarness(request: ExchangeHarness.request()) { pdu in
            let answers = server.answer(pdu)
            // Before every answer: a notification, an indication and an MTU request from the peer.
            return answers.isEmpty ? answers : [[0x1B, 0x30, 0x00, 1, 2], [0x1D, 0x31, 0x00, 9], [0x02, 0x00, 0x02]] + answers
        }
        harness.run()
        let completion = try XCTUnwrap(harness.completion)
        XCTAssertEqual(completion.attRequests, 5)
        XCTAssertEqual(harness.sent.filter { $0 == [0x1E] }.count, 5)
        XCTAssertEqual(harness.sent.filter { $0 == [0x03, 23, 0] }.count, 5)
        XCTAssertEqual(harness.client.bearer.counters.notificationsIgnored, 5)
    }

    func testLinkLossFailsTheRunningProcedure() {
        var harness = ExchangeHarness(request: ExchangeHarness.request()) { _ in nil }
        harness.process(harness.client.start(.read(handle: 0x14), now: .zero))
        let actions = harness.client.linkClosed()
        XCTAssertEqual(actions, [.completed(.failure(.linkClosed), requests: 1)])
        XCTAssertEqual(harness.client.start(.read(handle: 0x14), now: .zero), [.completed(.failure(.bearerClosed), requests: 0)])
    }
}
