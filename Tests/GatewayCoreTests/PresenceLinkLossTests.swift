import EventLoop
import XCTest
@testable import GatewayCore

/// `linkLost` for connection-tracked tags (see docs/persistent-connect.md).
final class PresenceLinkLossTests: XCTestCase {
    func testLinkLossMakesPresentUnconfirmedAndTheVisitContinues() {
        var h = PresenceHarness()
        h.sample(-60, at: 0)
        h.sample(-61, at: 0.5)
        XCTAssertEqual(h.state(), .present)
        h.advance(to: 2)
        h.events += h.engine.linkLost(tagIndex: 0, at: h.now)
        XCTAssertEqual(h.state(), .unconfirmed, "at once, not after lost_after_s")
        // Reconnected: samples continue the same visit, no second checkin.
        h.sample(-60, at: 3)
        h.sample(-60, at: 3.5)
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.checkins.count, 1)
    }

    func testLinkLossOutsideAVisitChangesNothing() {
        var h = PresenceHarness()
        h.sample(-95, at: 0)
        XCTAssertEqual(h.engine.linkLost(tagIndex: 0, at: h.now).count, 0)
        XCTAssertEqual(h.state(), .nearby)
        XCTAssertEqual(h.engine.linkLost(tagIndex: 42, at: h.now).count, 0)
    }
}
