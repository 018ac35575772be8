#if canImport(Glibc)
import Glibc
#endif
import EventLoop
import JournalFixtures
import XCTest
@testable import Journal

final class SystemdNotifierTests: XCTestCase {
    func testMessagesReachNotifySocketPath() throws {
        let manager = try DatagramReceiver()
        try withEnvironment("NOTIFY_SOCKET", manager.address) {
            let notifier = try XCTUnwrap(SystemdNotifier.fromEnvironment())
            try notifier.notify(.ready, .status(ServiceNotification.summary(scanning: true, present: 3, outbox: 0)))
            try notifier.notify(.watchdog)
            try notifier.notify(.reloading(monotonicMicroseconds: 123_456_789))
            try notifier.notify(.stopping)
        }
        let received = (0 ..< 5).compactMap { _ in manager.receive() }.map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(received, [
            "READY=1\nSTATUS=scanning · 3 present · outbox 0",
            "WATCHDOG=1",
            "RELOADING=1\nMONOTONIC_USEC=123456789",
            "STOPPING=1",
        ])
    }

    func testAbstractNotifySocket() throws {
        let manager = try DatagramReceiver(abstract: true)
        XCTAssertTrue(manager.address.hasPrefix("@"))
        try withEnvironment("NOTIFY_SOCKET", manager.address) {
            try XCTUnwrap(SystemdNotifier.fromEnvironment()).notify(.ready)
        }
        XCTAssertEqual(manager.receive().map { String(decoding: $0, as: UTF8.self) }, "READY=1")
    }

    func testNoNotifierOutsideSystemd() {
        withEnvironment("NOTIFY_SOCKET", nil) { XCTAssertNil(SystemdNotifier.fromEnvironment()) }
        withEnvironment("NOTIFY_SOCKET", "") { XCTAssertNil(SystemdNotifier.fromEnvironment()) }
        withEnvironment("NOTIFY_SOCKET", "/" + String(repeating: "x", count: 200)) { XCTAssertNil(SystemdNotifier.fromEnvironment()) }
    }

    func testSendToAbsentSocketIsATypedError() throws {
        let notifier = try SystemdNotifier(socketAddress: "/tmp/bg-no-manager-\(getpid())")
        XCTAssertThrowsError(try notifier.notify(.ready)) { error in
            guard case .send(_, let code) = error as? DatagramError else { return XCTFail("\(error)") }
            XCTAssertEqual(code, ENOENT)
        }
    }

    func testStatusIsOneLine() {
        XCTAssertEqual(ServiceNotification.status("a\nREADY=1").text, "STATUS=a READY=1")
        XCTAssertEqual(ServiceNotification.reloading(at: Instant(nanoseconds: 5_000_999)).text, "RELOADING=1\nMONOTONIC_USEC=5000")
    }

    func testWatchdogEnvironment() {
        XCTAssertEqual(SystemdNotifier.watchdogInterval(microseconds: "30000000", pid: nil, ownPID: 42), .seconds(30))
        XCTAssertEqual(SystemdNotifier.watchdogInterval(microseconds: "30000000", pid: "42", ownPID: 42), .seconds(30))
        XCTAssertNil(SystemdNotifier.watchdogInterval(microseconds: "30000000", pid: "41", ownPID: 42))
        XCTAssertNil(SystemdNotifier.watchdogInterval(microseconds: "0", pid: nil, ownPID: 42))
        XCTAssertNil(SystemdNotifier.watchdogInterval(microseconds: "-5", pid: nil, ownPID: 42))
        XCTAssertNil(SystemdNotifier.watchdogInterval(microseconds: "abc", pid: nil, ownPID: 42))
        XCTAssertNil(SystemdNotifier.watchdogInterval(microseconds: nil, pid: "42", ownPID: 42))
        withEnvironment("WATCHDOG_USEC", "4000000") {
            withEnvironment("WATCHDOG_PID", "\(getpid())") {
                XCTAssertEqual(SystemdNotifier.watchdogInterval(), .seconds(4))
            }
        }
    }
}

final class WatchdogGateTests: XCTestCase {
    func s(_ seconds: Int64) -> Instant { Instant(nanoseconds: seconds * 1_000_000_000) }

    func testFeedsAtHalfTheIntervalOnlyWhileTheControllerAnswers() {
        var gate = WatchdogGate(interval: .seconds(30))
        XCTAssertEqual(gate.feedPeriod, .seconds(15))
        XCTAssertFalse(gate.shouldFeed(at: s(0)), "no answer yet: no keep-alive")
        gate.controllerAnswered(at: s(1))
        XCTAssertTrue(gate.shouldFeed(at: s(2)))
        XCTAssertFalse(gate.shouldFeed(at: s(9)), "fed 7 s ago, less than half the feed period")
        gate.controllerAnswered(at: s(12))
        XCTAssertTrue(gate.shouldFeed(at: s(17)))
        // The controller falls silent after 12 s: feeds stop once its answer is 30 s old.
        XCTAssertTrue(gate.shouldFeed(at: s(32)))
        XCTAssertFalse(gate.shouldFeed(at: s(47)))
        gate.controllerAnswered(at: s(48))
        XCTAssertTrue(gate.shouldFeed(at: s(48)))
    }

    func testAFeedBetweenTicksDoesNotStretchTheNextGapTowardsTheWholeInterval() {
        // The agent asks on a timer of feedPeriod (ticks at 0, 15, 30, ...) and also on
        // every status change: here the controller is lost at 3 s and back at 16 s.
        var gate = WatchdogGate(interval: .seconds(30))
        var feeds = [Int64]()
        func ask(_ second: Int64) { if gate.shouldFeed(at: s(second)) { feeds.append(second) } }
        gate.controllerAnswered(at: s(0))
        ask(0)
        gate.controllerLost()
        ask(3)
        for second: Int64 in [15, 16, 30, 45, 60] {
            if second >= 16 { gate.controllerAnswered(at: s(second)) }  // scanning again
            ask(second)
        }
        XCTAssertEqual(feeds.first, 0)
        let afterRecovery = feeds.drop(while: { $0 < 16 })
        XCTAssertEqual(afterRecovery.first, 16, "fed as soon as the controller is back")
        let gaps = zip(afterRecovery.dropFirst(), afterRecovery).map { $0 - $1 }
        // Without the fix the tick at 30 s was held off (fed 14 s ago) and the next feed came
        // at 45 s: 29 s of a 30 s WatchdogSec, with no room for a slow loop.
        XCTAssertEqual(Array(afterRecovery), [16, 30, 45, 60])
        XCTAssertTrue(gaps.allSatisfy { $0 <= 15 }, "gaps \(gaps)")
    }

    func testControllerLostStopsFeedingAtOnce() {
        var gate = WatchdogGate(interval: .seconds(10), answerFreshness: .seconds(6))
        gate.controllerAnswered(at: s(0))
        XCTAssertTrue(gate.shouldFeed(at: s(0)))
        gate.controllerLost()
        XCTAssertFalse(gate.shouldFeed(at: s(5)))
        gate.controllerAnswered(at: s(6))
        XCTAssertTrue(gate.shouldFeed(at: s(6)))
        XCTAssertFalse(gate.shouldFeed(at: s(13)), "answer 7 s old with 6 s freshness")
    }
}
