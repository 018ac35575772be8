import EventLoop
import Host
import PresenceProof
import XCTest

/// A proof's challenge-to-response time on virtual time: the write-then-read exchange
/// measures it from its inputs' instants, `ProofTimeLimit` judges it (docs/security.md,
/// "Relayed proofs").
final class ProofTimeLimitTests: XCTestCase {
    private let handles = GATTWriteReadExchange.Handles(write: 0x0012, read: 0x0014)
    private let response: [UInt8] = [0x01] + Array(repeating: 0xAB, count: 16)

    private func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

    /// A cached-handles exchange: the challenge written at `start`, its write answered at
    /// `written`, the response read at `read`. What the runner judges.
    private func challengeToResponse(start: Int64, written: Int64, read: Int64) throws -> Duration {
        var exchange = GATTWriteReadExchange(request: .init(
            service: GATTUUID(uuid16: 0x1234), writeCharacteristic: GATTUUID(uuid16: 0x1235),
            readCharacteristic: GATTUUID(uuid16: 0x1236), value: Array(repeating: 7, count: 17), cachedHandles: handles))
        XCTAssertEqual(exchange.start(now: ms(start)), .run(.write(handle: 0x0012, value: Array(repeating: 7, count: 17))))
        XCTAssertEqual(exchange.advance(.success(.written), requests: 1, now: ms(written)), .run(.read(handle: 0x0014)))
        guard case .finished(.success(let completion)) = exchange.advance(.success(.value(response)), requests: 1, now: ms(read)) else {
            throw XCTSkip("the exchange did not complete")
        }
        return completion.timings.write + completion.timings.read
    }

    func testAResponseWithinTheBoundPassesAndALaterOneIsTooSlow() throws {
        let limit = ProofTimeLimit()
        XCTAssertEqual(limit.bound, .milliseconds(600))
        // A genuine tag: two connection events each for the write and the read at 50 ms.
        XCTAssertNil(limit.judge(challengeToResponse: try challengeToResponse(start: 1_000, written: 1_100, read: 1_200)))
        // Exactly the bound still passes.
        XCTAssertNil(limit.judge(challengeToResponse: try challengeToResponse(start: 0, written: 300, read: 600)))
        // A relay that adds 350 ms on the way to the real tag and back.
        let relayed = try challengeToResponse(start: 5_000, written: 5_100, read: 5_650)
        XCTAssertEqual(relayed, .milliseconds(650))
        let failure = try XCTUnwrap(limit.judge(challengeToResponse: relayed))
        XCTAssertEqual(failure, .tooSlow(milliseconds: 650, bound: 600))
        XCTAssertEqual(failure.name, "too_slow")
        XCTAssertTrue(failure.countsTowardsLockout)
        XCTAssertTrue(failure.description.contains("650 ms") && failure.description.contains("600 ms"), failure.description)
        // The bound is configurable.
        XCTAssertNil(ProofTimeLimit(bound: .seconds(1)).judge(challengeToResponse: relayed))
    }
}
