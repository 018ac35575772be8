import EventLoop
import XCTest
@testable import GatewayCore
import PresenceProof

/// Proofs through the door core: wishes, handshakes, lockouts and spoof_suspected.
final class DoorProofTests: XCTestCase {
    static func ok(_ tag: String) -> ProofOutcome {
        ProofOutcome(tagId: tag, connectionHandle: 0x41, failure: nil, roundTripMilliseconds: 80, attRoundTrips: 2,
                     handles: ProofHandles(challenge: 0x10, response: 0x12), usedCachedHandles: false)
    }

    static func failed(_ tag: String) -> ProofOutcome {
        ProofOutcome(tagId: tag, connectionHandle: 0x41, failure: .timeout, roundTripMilliseconds: 90, attRoundTrips: 2,
                     handles: nil, usedCachedHandles: true)
    }

    func testAProofChecksInAPersonWhoWaitsForIt() {
        var door = DoorHarness(DoorHarness.setup(persons: 1, requireProof: [0]))
        door.stay(0, seconds: 3)
        XCTAssertTrue(door.store.events.isEmpty)
        XCTAssertEqual(door.logged("not checked in: proof required").count, 1)
        XCTAssertNotNil(door.wanted[0])
        door.perform(door.core.connected(tagIndex: 0, handle: 0x41, at: door.now))
        XCTAssertEqual(door.proofsStarted.map(\.tagId), ["t0"])
        door.perform(door.core.proofFinished(Self.ok("t0"), at: door.now))
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertEqual(door.store.events.first?.handshake?.ok, true)
        XCTAssertNil(door.wanted[0], "proven: no longer wanted")
        XCTAssertTrue(door.indications.contains(.proofFinished(ok: true)))
    }

    func testAConnectionNobodyNeedsIsClosed() {
        var door = DoorHarness(DoorHarness.setup(persons: 1, requireProof: [0]))
        door.perform(door.core.connected(tagIndex: 0, handle: 0x42, at: door.now))
        XCTAssertEqual(door.disconnected, [0x42])
        XCTAssertTrue(door.proofsStarted.isEmpty)
    }

    func testALockoutDecidesOneSpoofSuspectedThatWaitsForARefusingStore() {
        var door = DoorHarness(DoorHarness.setup(persons: 1, requireProof: [0]))
        door.stay(0, seconds: 3)
        door.store.refusing = DoorCommitTests.ioError
        for _ in 0 ..< ProofBook.Policy().maxConsecutiveFailures {
            door.perform(door.core.proofFinished(Self.failed("t0"), at: door.now))
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.logged("spoof suspected: tag locked out").count, 1)
        XCTAssertEqual(door.core.uncommittedCount, 1, "queued, not dropped")
        XCTAssertEqual(door.indications.filter { $0 == .proofFailed }.count, 3)
        XCTAssertNil(door.wanted[0], "locked out: not wanted")
        door.store.refusing = nil
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.map(\.type), [.spoofSuspected])
        XCTAssertEqual(door.store.events.first?.handshake?.ok, false)
        XCTAssertEqual(door.logged("spoof_suspected").count, 1)
        XCTAssertTrue(door.store.events(.checkin).isEmpty, "a locked-out tag checks nobody in")
    }
}
