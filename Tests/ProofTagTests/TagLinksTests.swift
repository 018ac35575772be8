import EventLoop
import XCTest
@testable import ProofTag

/// No central keeps a door from proving the reference tag (docs/gatt-server.md, "The
/// reference tag"): idle centrals are let go, and the tag advertises while connected when
/// its controller can.
final class TagLinksTests: XCTestCase {
    private func at(_ seconds: Int64) -> Instant { Instant(nanoseconds: seconds * 1_000_000_000) }

    func testAnIdleCentralIsLetGoAndTheTagAdvertisesBesideIt() {
        var links = TagLinks(advertisesWhileConnected: true)
        XCTAssertEqual(links.controllerUp(), [.advertise])
        // An idle central connects: the tag advertises again at once, for the door.
        XCTAssertEqual(links.connected(0x40, now: at(1)), [.advertise])
        XCTAssertEqual(links.nextDeadline, at(11))
        // The door connects and proves; it is kept until it leaves.
        XCTAssertEqual(links.connected(0x41, now: at(2)), [.advertise])
        links.challengeAnswered(0x41)
        XCTAssertEqual(links.timerFired(now: at(10)), [])
        XCTAssertEqual(links.timerFired(now: at(11)), [.disconnectIdle(0x40)], "the idle one, at its limit")
        XCTAssertEqual(links.timerFired(now: at(12)), [], "once")
        XCTAssertNil(links.nextDeadline, "the door, proving, has none")
        XCTAssertEqual(links.closed(0x41), [], "still advertising since the door connected")
        XCTAssertEqual(links.closed(0x40), [])
        XCTAssertEqual(links.closed(0x40), [], "a link closed twice")
    }

    func testAtMostMaxLinksThenAdvertisingWaitsForOneToEnd() {
        var links = TagLinks(advertisesWhileConnected: true, maxLinks: 2)
        _ = links.controllerUp()
        XCTAssertEqual(links.connected(1, now: at(0)), [.advertise])
        XCTAssertEqual(links.connected(2, now: at(0)), [], "full: no more advertising")
        XCTAssertEqual(links.closed(1), [.advertise])
    }

    func testWithoutAdvertisingWhileConnectedTheIdleLimitFreesTheTag() {
        var links = TagLinks(advertisesWhileConnected: false)
        _ = links.controllerUp()
        XCTAssertEqual(links.connected(0x40, now: at(0)), [], "the controller cannot advertise beside a link")
        XCTAssertEqual(links.timerFired(now: at(10)), [.disconnectIdle(0x40)])
        XCTAssertEqual(links.closed(0x40), [.advertise], "free again within the idle limit")
        // A controller reset forgets the links.
        XCTAssertEqual(links.connected(0x41, now: at(20)), [])
        XCTAssertEqual(links.controllerUp(), [.advertise])
        XCTAssertEqual(links.linkCount, 0)
        XCTAssertNil(links.nextDeadline)
    }
}
