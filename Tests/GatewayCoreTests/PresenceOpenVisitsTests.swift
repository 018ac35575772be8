import EventLoop
import XCTest
@testable import GatewayCore

/// `openVisits(at:)`, what `status` lists (see docs/fleet.md).
final class PresenceOpenVisitsTests: XCTestCase {
    func testOnlyOpenVisitsWithTheirStartSignalTagAndProof() throws {
        var h = PresenceHarness()
        XCTAssertEqual(h.engine.openVisits(at: h.now), [], "nobody is inside")
        h.sample(-95, at: 0)
        XCTAssertEqual(h.engine.openVisits(at: h.now), [], "NEARBY is no visit")
        h.sample(-60, at: 0.5)
        h.sample(-62, at: 1)
        var visit = try XCTUnwrap(h.engine.openVisits(at: h.now).first)
        XCTAssertEqual(visit.personId, "p1")
        XCTAssertEqual(visit.state, .present)
        XCTAssertEqual(visit.visitStartWallMilliseconds, PresenceHarness.wallOrigin + 1000)
        XCTAssertEqual(visit.filteredRSSI, -62, "median of -95, -60, -62")
        XCTAssertEqual(visit.tagId, "t1")
        XCTAssertFalse(visit.proven)

        _ = h.engine.proofSucceeded(tagIndex: 0, at: seconds(1.2), roundTripMilliseconds: 150)
        XCTAssertTrue(try XCTUnwrap(h.engine.openVisits(at: seconds(1.3)).first).proven)

        // Silent past lost_after_s: UNCONFIRMED, still an open visit, no filtered signal.
        h.clock.advance(to: seconds(12))
        _ = h.engine.advance(to: h.now)
        visit = try XCTUnwrap(h.engine.openVisits(at: h.now).first)
        XCTAssertEqual(visit.state, .unconfirmed)
        XCTAssertNil(visit.filteredRSSI)
        XCTAssertEqual(visit.tagId, "t1", "the tag that decided the visit")
    }
}
