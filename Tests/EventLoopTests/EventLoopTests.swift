import Glibc
import XCTest
@testable import EventLoop

final class EventLoopTests: XCTestCase {
    func testTimersFireInDeadlineOrderThenSchedulingOrder() throws {
        let loop = EventLoop()
        let base = loop.now
        var fired: [String] = []
        // Scheduled out of order; two share a deadline and must keep scheduling order.
        loop.schedule(at: base + .milliseconds(30)) { fired.append("c") }
        loop.schedule(at: base + .milliseconds(10)) { fired.append("a") }
        loop.schedule(at: base + .milliseconds(20)) { fired.append("b1") }
        loop.schedule(at: base + .milliseconds(20)) { fired.append("b2") }
        loop.schedule(at: base - .milliseconds(5)) { fired.append("past") }
        try loop.run() // returns once nothing is left to wait for
        XCTAssertEqual(fired, ["past", "a", "b1", "b2", "c"])
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testTimerNeverFiresBeforeItsDeadline() throws {
        let loop = EventLoop()
        let deadline = loop.now + .milliseconds(15)
        var firedAt: Instant?
        loop.schedule(at: deadline) { firedAt = loop.now }
        try loop.run()
        let at = try XCTUnwrap(firedAt)
        XCTAssertGreaterThanOrEqual(at, deadline)
    }

    func testCancelledTimerDoesNotFire() throws {
        let loop = EventLoop()
        var fired: [Int] = []
        let first = loop.schedule(after: .milliseconds(5)) { fired.append(1) }
        loop.schedule(after: .milliseconds(1)) { fired.append(0) }
        loop.schedule(after: .milliseconds(10)) { fired.append(2) }
        XCTAssertTrue(loop.cancel(first))
        XCTAssertFalse(loop.cancel(first))
        try loop.run()
        XCTAssertEqual(fired, [0, 2])
    }

    func testTimerCancelledByEarlierTimerOfTheSameTurn() throws {
        let loop = EventLoop()
        let deadline = loop.now
        var fired: [Int] = []
        var second: EventLoop.TimerHandle?
        loop.schedule(at: deadline) {
            fired.append(1)
            if let second { loop.cancel(second) }
        }
        second = loop.schedule(at: deadline) { fired.append(2) }
        try loop.run()
        XCTAssertEqual(fired, [1])
    }

    func testRearmedTimersKeepMemoryBounded() {
        var queue = TimerQueue()
        for id in 0 ..< UInt64(10_000) {
            queue.insert(id: id, deadline: Instant(nanoseconds: Int64(id)), callback: {})
            if id > 0 { queue.cancel(id: id - 1) }
        }
        XCTAssertEqual(queue.count, 1)
        XCTAssertLessThan(queue.storedEntryCount, 200)
        XCTAssertNotNil(queue.popDue(now: Instant(nanoseconds: 10_000)))
        XCTAssertNil(queue.nextDeadline())
    }

    func testPollTimeoutRoundsUpAndClamps() {
        let now = Instant(nanoseconds: 1_000)
        XCTAssertEqual(EventLoop.pollTimeout(until: nil, now: now), -1)
        XCTAssertEqual(EventLoop.pollTimeout(until: now, now: now), 0)
        XCTAssertEqual(EventLoop.pollTimeout(until: now + .nanoseconds(1), now: now), 1)
        XCTAssertEqual(EventLoop.pollTimeout(until: now + .milliseconds(2), now: now), 2)
        XCTAssertEqual(EventLoop.pollTimeout(until: Instant(nanoseconds: .max), now: Instant(nanoseconds: .min)), Int32.max)
        XCTAssertEqual(EventLoop.pollTimeout(until: Instant(nanoseconds: .min), now: Instant(nanoseconds: .max)), 0)
    }

    func testPipeReadabilityAndUnregister() throws {
        let loop = EventLoop()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        var received: [UInt8] = []
        var registration: EventLoop.Registration?
        registration = loop.register(fileDescriptor: readEnd) {
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = read(readEnd, &buffer, buffer.count)
            if count > 0 { received += buffer.prefix(count) }
            if received.count >= 3, let registration { loop.unregister(registration) }
        }
        // Written from timers, so the loop really waits for the descriptor first.
        loop.schedule(after: .milliseconds(2)) { _ = write(writeEnd, [1, 2] as [UInt8], 2) }
        loop.schedule(after: .milliseconds(4)) { _ = write(writeEnd, [3] as [UInt8], 1) }
        try loop.run() // ends once the descriptor is unregistered and the timers are done
        XCTAssertEqual(received, [1, 2, 3])
    }

    func testStopFromACallbackEndsRun() throws {
        let loop = EventLoop()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        _ = loop.register(fileDescriptor: readEnd) { XCTFail("never readable") }
        var turns = 0
        loop.schedule(after: .milliseconds(1)) { turns += 1; loop.stop() }
        loop.schedule(after: .milliseconds(2)) { turns += 1 }
        try loop.run() // would block forever on the pipe without stop()
        XCTAssertEqual(turns, 1)
        XCTAssertFalse(loop.isRunning)
    }

    func testStopBeforeRunEndsThatRunAtOnceAndOnlyThatRun() throws {
        let loop = EventLoop()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        _ = loop.register(fileDescriptor: readEnd) { XCTFail("never readable") }
        var fired = 0
        loop.schedule(at: loop.now) { fired += 1 }
        // A start-up step that failed before the loop ran (the agent's first transport
        // open) stops it: run() must not wait on the pipe forever.
        loop.stop()
        try loop.run()
        XCTAssertEqual(fired, 0)
        // The stop was used up: the next run runs until its own stop.
        loop.schedule(after: .milliseconds(1)) { loop.stop() }
        try loop.run()
        XCTAssertEqual(fired, 1)
    }

    func testPendingSourceRunsWithoutBlockingUntilDone() throws {
        let loop = EventLoop()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        // A descriptor that never becomes readable: a blocking wait would hang the test.
        _ = loop.register(fileDescriptor: readEnd) {}
        var remaining = 1000
        var timerFired = false
        _ = loop.registerPendingSource(hasWork: { remaining > 0 }) {
            remaining -= 1
            if remaining == 0 { loop.stop() }
        }
        loop.schedule(at: loop.now) { timerFired = true }
        try loop.run()
        XCTAssertEqual(remaining, 0)
        XCTAssertTrue(timerFired, "a busy source must not starve timers")
    }

    func testIdlePendingSourceWakesAfterWorkArrives() throws {
        let loop = EventLoop()
        var queue: [Int] = []
        var taken: [Int] = []
        _ = loop.registerPendingSource(hasWork: { !queue.isEmpty }) {
            taken.append(queue.removeFirst())
            if taken.count == 2 { loop.stop() }
        }
        loop.schedule(after: .milliseconds(2)) { queue += [7, 8] }
        try loop.run()
        XCTAssertEqual(taken, [7, 8])
    }

    func testClosedDescriptorIsDroppedNotSpunOn() throws {
        let loop = EventLoop()
        let (readEnd, writeEnd) = try makePipe()
        close(readEnd)
        close(writeEnd)
        var calls = 0
        _ = loop.register(fileDescriptor: readEnd) { calls += 1 }
        try loop.run()
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(loop.invalidDescriptorCount, 1)
    }

    func testRaisedSignalIsDeliveredOnceOnTheLoop() throws {
        let loop = EventLoop()
        var hangups = 0
        var terms = 0
        try loop.onSignal(.hangup) { hangups += 1 }
        // Given back on every path: a test that threw here would leave SIGTERM to a pipe
        // nobody reads for the rest of the process.
        defer { loop.stopHandlingSignals() }
        try loop.onSignal(.terminate) { terms += 1 }
        XCTAssertThrowsError(try EventLoop().onSignal(.interrupt) {}) { error in
            XCTAssertEqual(error as? EventLoopError, .signalsOwnedByAnotherLoop)
        }
        loop.schedule(after: .milliseconds(1)) { raise(SIGHUP) }
        // Give the loop further turns after the signal to catch a second delivery.
        loop.schedule(after: .milliseconds(20)) { loop.stop() }
        try loop.run()
        XCTAssertEqual(hangups, 1)
        XCTAssertEqual(terms, 0)
        loop.stopHandlingSignals()
        // Released: another loop may take them now.
        let other = EventLoop()
        XCTAssertNoThrow(try other.onSignal(.interrupt) {})
        other.stopHandlingSignals()
    }

    private func makePipe() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw EventLoopError.systemCall("pipe", errno: errno) }
        return (ends[0], ends[1])
    }
}
