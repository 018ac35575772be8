import XCTest
@testable import EventLoop

final class DeadlineTimerTests: XCTestCase {
    func testReArmsOnlyWhenTheDeadlineChangesAndMayReArmFromItsCallback() throws {
        let loop = EventLoop()
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
        try loop.run()
        XCTAssertEqual(fired.count, 2)
        XCTAssertGreaterThanOrEqual(fired[0], base + .milliseconds(2))
        XCTAssertGreaterThanOrEqual(fired[1], base + .milliseconds(4))
    }

    func testMovingTheDeadlineOrDisarmingReplacesTheTimer() throws {
        let loop = EventLoop()
        let base = loop.now
        var fired = 0
        let timer = DeadlineTimer(loop: loop) { fired += 1 }
        timer.arm(at: base + .milliseconds(50))
        timer.arm(at: base + .milliseconds(1))
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        try loop.run()
        XCTAssertEqual(fired, 1, "only the moved deadline fired")

        timer.arm(at: loop.now + .milliseconds(1))
        timer.arm(at: nil)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        timer.arm(at: loop.now + .milliseconds(1))
        timer.cancel()
        try loop.run()
        XCTAssertEqual(fired, 1)
    }
}
