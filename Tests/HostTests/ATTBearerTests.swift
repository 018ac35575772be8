import EventLoop
import SplitMix
import XCTest
@testable import Host

final class ATTBearerTests: XCTestCase {
    func testOneOutstandingRequestAtATime() throws {
        var bearer = ATTBearer()
        XCTAssertEqual(try bearer.request([0x0A, 0x14, 0x00], now: .zero), [.send([0x0A, 0x14, 0x00])])
        XCTAssertThrowsError(try bearer.request([0x0A, 0x16, 0x00], now: .zero)) { XCTAssertEqual($0 as? GATTError, .busy) }
        XCTAssertEqual(bearer.receive([0x0B, 7], now: .zero), [.response(.readResponse, [7])])
        XCTAssertNoThrow(try bearer.request([0x0A, 0x16, 0x00], now: .zero))
    }

    func testUnsolicitedResponsesAreDroppedNotFatal() {
        var bearer = ATTBearer()
        XCTAssertEqual(bearer.receive([0x0B, 1], now: .zero), [])
        XCTAssertEqual(bearer.receive([0x01, 0x0A, 0x14, 0x00, 0x01], now: .zero), [])
        XCTAssertEqual(bearer.receive([], now: .zero), [])
        XCTAssertFalse(bearer.isClosed)
        XCTAssertEqual(bearer.counters.unsolicitedResponses, 2)
    }

    func testPeerRequestsAreRefusedAsAnEmptyServer() {
        var bearer = ATTBearer()
        XCTAssertEqual(bearer.receive([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], now: .zero),
                       [.send([0x01, 0x10, 0x01, 0x00, 0x0A])])
        XCTAssertEqual(bearer.receive([0x0A, 0x05, 0x00], now: .zero), [.send([0x01, 0x0A, 0x05, 0x00, 0x01])])
        XCTAssertEqual(bearer.receive([0x3F], now: .zero), [.send([0x01, 0x3F, 0x00, 0x00, 0x06])])
        XCTAssertEqual(bearer.receive([0x52, 0x05, 0x00, 1], now: .zero), [])
        XCTAssertEqual(bearer.receive([0x02, 0xF7, 0x00], now: .zero), [.send([0x03, 23, 0])])
        XCTAssertEqual(bearer.receive([0x02, 0xF7], now: .zero), [.send([0x01, 0x02, 0x00, 0x00, 0x04])])
    }

    func testTimeoutClosesTheBearerAndLaterPDUsAreDropped() throws {
        var bearer = ATTBearer(configuration: .init(operationTimeout: .seconds(5)))
        _ = try bearer.request([0x0A, 0x14, 0x00], now: .zero)
        XCTAssertEqual(bearer.nextDeadline, Instant.zero + .seconds(5))
        XCTAssertEqual(bearer.timerFired(now: Instant.zero + .seconds(4)), [])
        XCTAssertEqual(bearer.timerFired(now: Instant.zero + .seconds(5)), [.closed(.timeout)])
        XCTAssertNil(bearer.nextDeadline)
        XCTAssertEqual(bearer.receive([0x0B, 1], now: Instant.zero + .seconds(6)), [])
        XCTAssertEqual(bearer.receive([0x1D, 1, 0, 1], now: Instant.zero + .seconds(6)), [])
        XCTAssertThrowsError(try bearer.request([0x0A, 0x14, 0x00], now: .zero)) { XCTAssertEqual($0 as? GATTError, .bearerClosed) }
    }

    /// Random PDUs (biased towards real opcodes) into a client mid-exchange: no trap, no
    /// growth, and every run ends (with a result or at a deadline).
    func testSeededFuzzOfPeerPDUs() {
        var random = SplitMix64(seed: 0x5EED)
        let opcodes: [UInt8] = [0x01, 0x03, 0x07, 0x09, 0x0B, 0x13, 0x1B, 0x1D, 0x02, 0x10, 0x52]
        for _ in 0 ..< 400 {
            let cached: GATTWriteReadExchange.Handles? = Bool.random(using: &random) ? .init(write: 0x12, read: 0x14) : nil
            var generator = random
            random = SplitMix64(seed: random.next())
            var harness = ExchangeHarness(request: ExchangeHarness.request(cached: cached)) { _ in
                var answers = [[UInt8]]()
                for _ in 0 ..< Int.random(in: 0 ... 3, using: &generator) {
                    var pdu = [UInt8]()
                    for _ in 0 ..< Int.random(in: 0 ... 30, using: &generator) { pdu.append(UInt8.random(in: 0 ... 255, using: &generator)) }
                    if !pdu.isEmpty, Int.random(in: 0 ..< 4, using: &generator) > 0 {
                        pdu[0] = opcodes[Int.random(in: 0 ..< opcodes.count, using: &generator)]
                    }
                    answers.append(pdu)
                }
                return answers
            }
            harness.run(maxSteps: 100)
            XCTAssertNotNil(harness.result)
            XCTAssertLessThan(harness.sent.count, 200)
            XCTAssertFalse(harness.client.isBusy)
            if case .failure(.gatt(let error))? = harness.result, error.closesBearer {
                XCTAssertTrue(harness.client.bearer.isClosed)
            }
        }
    }
}
