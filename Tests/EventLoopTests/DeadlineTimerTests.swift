import XCTest
@testable import EventLoop

/// On virtual time: the deadlines are exact and nothing waits.
final class DeadlineTimerTests: XCTestCase {
    func testReArmsOnlyWhenTheDeadlineChangesAndMayReArmFromItsCallback() throws {
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let base = loop.now
        var fired: [Instant] = []
        var next: [Instant] = [base + .milliseconds(4)]
        var timer: DeadlineTimer!
        timer = DeadlineTimer(loop: loop) {
            fired.append(loop.now)
            // Unarmed again by now: arming the same kind of deadline works.
            if let following = next.popLast() { timer.arm(at: following) }
        }
        timer.arm(at: base + .milliseconds(2))
        timer.arm(at: base + .milliseconds(2))
        XCTAssertEqual(loop.scheduledTimerCount, 1, "the same deadline again schedules nothing")
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(fired, [base + .milliseconds(2), base + .milliseconds(4)])
    }

    func testMovingTheDeadlineOrDisarmingReplacesTheTimer() throws {
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let base = loop.now
        var fired: [Instant] = []
        let timer = DeadlineTimer(loop: loop) { fired.append(loop.now) }
        timer.arm(at: base + .milliseconds(50))
        timer.arm(at: base + .milliseconds(1))
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(fired, [base + .milliseconds(1)], "only the moved deadline fired")

        timer.arm(at: loop.now + .milliseconds(1))
        timer.arm(at: nil)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        timer.arm(at: loop.now + .milliseconds(1))
        timer.cancel()
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(fired.count, 1)
    }
}
