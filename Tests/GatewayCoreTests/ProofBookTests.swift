import EventLoop
import XCTest
@testable import GatewayCore
import PresenceProof

final class ProofBookTests: XCTestCase {
    private let handles = ProofHandles(challenge: 0x0012, response: 0x0014)
    private func at(_ seconds: Int64) -> Instant { Instant(nanoseconds: seconds * 1_000_000_000) }

    func testThreeFailuresLockOutOnceWithOneSpoofSuspected() {
        var book = ProofBook()
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .timeout, now: at(0)), .counted(consecutive: 1))
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .serviceMissing, now: at(10)), .counted(consecutive: 2))
        XCTAssertTrue(book.mayAttempt(tag: "t", now: at(11)))
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .invalidResponse(.macMismatch), now: at(20)),
                       .lockedOut(since: at(20), until: at(320)))
        XCTAssertFalse(book.mayAttempt(tag: "t", now: at(21)))
        XCTAssertFalse(book.mayAttempt(tag: "t", now: at(319)))
        // A handshake racing the lockout: no second spoof_suspected.
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .timeout, now: at(30)), .alreadyLockedOut)
        XCTAssertEqual(book.nextDeadline, at(320))
        XCTAssertEqual(book.expireLockouts(now: at(319)), [])
        XCTAssertEqual(book.expireLockouts(now: at(320)), ["t"])
        XCTAssertTrue(book.mayAttempt(tag: "t", now: at(320)))
        XCTAssertEqual(book.consecutiveFailures(tag: "t"), 0)
        XCTAssertNil(book.nextDeadline)
        // Starts afresh: it takes three more.
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .timeout, now: at(400)), .counted(consecutive: 1))
    }

    func testTooSlowProofsCountTowardTheLockout() {
        var book = ProofBook()
        let slow = ProofFailure.tooSlow(milliseconds: 900, bound: 600)
        XCTAssertEqual(book.recordFailure(tag: "t", reason: slow, now: at(0)), .counted(consecutive: 1))
        XCTAssertEqual(book.recordFailure(tag: "t", reason: slow, now: at(10)), .counted(consecutive: 2))
        XCTAssertEqual(book.recordFailure(tag: "t", reason: slow, now: at(20)), .lockedOut(since: at(20), until: at(320)))
        XCTAssertEqual(book.lastFailure(tag: "t"), slow)
    }

    func testLockoutEndsEvenWithoutExpireCall() {
        var book = ProofBook()
        for second in 0 ..< 3 { _ = book.recordFailure(tag: "t", reason: .timeout, now: at(Int64(second))) }
        XCTAssertTrue(book.isLockedOut(tag: "t", now: at(100)))
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .timeout, now: at(400)), .counted(consecutive: 1))
    }

    func testSuccessResetsFailuresAndCachesHandles() {
        var book = ProofBook()
        _ = book.recordFailure(tag: "t", reason: .timeout, now: at(0))
        _ = book.recordFailure(tag: "t", reason: .timeout, now: at(1))
        book.recordSuccess(tag: "t", handles: handles, roundTripMilliseconds: 180, now: at(2))
        XCTAssertEqual(book.consecutiveFailures(tag: "t"), 0)
        XCTAssertEqual(book.cachedHandles(tag: "t"), handles)
        XCTAssertEqual(book.lastProof(tag: "t"), .init(at: at(2), roundTripMilliseconds: 180))
        XCTAssertTrue(book.isProven(tag: "t", now: at(601), ttl: .seconds(600)))
        XCTAssertFalse(book.isProven(tag: "t", now: at(602), ttl: .seconds(600)))
        // Two more failures do not lock out: the success broke the run.
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .timeout, now: at(3)), .counted(consecutive: 1))
        XCTAssertEqual(book.recordFailure(tag: "t", reason: .timeout, now: at(4)), .counted(consecutive: 2))
    }

    func testAnyFailureDropsTheHandleCache() {
        var book = ProofBook()
        book.recordSuccess(tag: "t", handles: handles, roundTripMilliseconds: 100, now: at(0))
        _ = book.recordFailure(tag: "t", reason: .attError(opcode: 0x12, code: 0x01), now: at(1))
        XCTAssertNil(book.cachedHandles(tag: "t"))
        XCTAssertEqual(book.lastFailure(tag: "t"), .attError(opcode: 0x12, code: 0x01))
    }

    func testTagsAreIndependentAndUnknownTagsAreUnproven() {
        var book = ProofBook()
        for second in 0 ..< 3 { _ = book.recordFailure(tag: "a", reason: .timeout, now: at(Int64(second))) }
        XCTAssertTrue(book.isLockedOut(tag: "a", now: at(5)))
        XCTAssertTrue(book.mayAttempt(tag: "b", now: at(5)))
        XCTAssertFalse(book.isProven(tag: "b", now: at(5), ttl: .seconds(600)))
        XCTAssertNil(book.cachedHandles(tag: "b"))
        book.retain(tags: ["b"])
        XCTAssertTrue(book.mayAttempt(tag: "a", now: at(5)))
    }

    func testControllerResetsAreNotTheTagsFailure() {
        var book = ProofBook()
        book.recordSuccess(tag: "t", handles: handles, roundTripMilliseconds: 100, now: at(0))
        for second in 1 ... 5 { XCTAssertEqual(book.recordFailure(tag: "t", reason: .controllerReset, now: at(Int64(second))), .notCounted) }
        XCTAssertEqual(book.consecutiveFailures(tag: "t"), 0)
        XCTAssertEqual(book.cachedHandles(tag: "t"), handles)
        XCTAssertTrue(book.mayAttempt(tag: "t", now: at(6)))
    }

    func testLockoutRevokesAnEarlierProof() {
        var book = ProofBook()
        book.recordSuccess(tag: "t", handles: handles, roundTripMilliseconds: 100, now: at(0))
        for second in 1 ... 3 { _ = book.recordFailure(tag: "t", reason: .timeout, now: at(Int64(second))) }
        XCTAssertFalse(book.isProven(tag: "t", now: at(4), ttl: .seconds(600)))
        XCTAssertEqual(ProofFailure.invalidResponse(.macMismatch).name, "wrong_response")
    }
}
