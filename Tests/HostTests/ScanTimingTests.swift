import HCI
import XCTest
@testable import Host

final class ScanTimingTests: XCTestCase {
    func testDefaultPassiveIsContinuousAtOneAndAHalfTagPeriods() {
        // 700 ms tags: period 705 ms, interval 1057.5 ms = 1692 units, window the same.
        let timing = ScanTiming.derive(ScanSettings(mode: .passive, tagIntervalMs: 700))
        XCTAssertEqual(timing, ScanTiming(interval: 1692, window: 1692))
        XCTAssertEqual(timing.duty, 1.0)
        // 100 ms tags: 157.5 ms = 252 units.
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 100)), ScanTiming(interval: 252, window: 252))
        // 20 ms (the fastest legal advertising): 37.5 ms = 60 units.
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 20)).interval, 60)
    }

    func testActiveKeepsAMarginAndDutyOverrides() {
        let active = ScanTiming.derive(ScanSettings(mode: .active, tagIntervalMs: 700))
        XCTAssertEqual(active.interval, 1692)
        XCTAssertEqual(active.window, 1523)
        let shared = ScanTiming.derive(ScanSettings(mode: .passive, tagIntervalMs: 700, dutyOverride: 0.3))
        XCTAssertEqual(shared.window, 508)
        let activeOverridden = ScanTiming.derive(ScanSettings(mode: .active, tagIntervalMs: 700, dutyOverride: 1.0))
        XCTAssertEqual(activeOverridden.window, activeOverridden.interval)
        // Out of range and nonsense values are clamped, never trap.
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 700, dutyOverride: 0.01)).window, 169)
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 700, dutyOverride: 7)).window, 1692)
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 700, dutyOverride: .nan)).window, 1692)
    }

    func testExtremesStayInTheLegalRange() {
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 60_000)).interval, ScanTiming.maximumUnits)
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: Int.max)).interval, ScanTiming.maximumUnits)
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: -5)).interval, 60)
        XCTAssertEqual(ScanTiming.derive(ScanSettings(tagIntervalMs: 0, dutyOverride: 0.1)).window, 6)
    }

    func testRuleNeverPhaseLocksAndAlwaysCoversAWholeTagPeriod() {
        for tagMs in stride(from: 20, through: 6_000, by: 7) {
            let timing = ScanTiming.derive(ScanSettings(tagIntervalMs: tagMs))
            let period = Double(tagMs + ScanTiming.meanAdvertisingDelayMs)
            let ratio = timing.intervalMilliseconds / period
            XCTAssertEqual(ratio, 1.5, accuracy: 0.01, "tag \(tagMs) ms")
            // Longer than the longest gap between two events of a tag (interval + 10 ms advDelay).
            XCTAssertGreaterThan(timing.intervalMilliseconds, Double(tagMs + 10), "tag \(tagMs) ms")
            XCTAssertLessThanOrEqual(timing.window, timing.interval)
            XCTAssertGreaterThanOrEqual(timing.window, ScanTiming.minimumUnits)
        }
    }
}

final class LogLineTests: XCTestCase {
    func testLogLinesAreKeyValue() {
        let line = HostLogEvent.recovering(.hardwareError(code: 0x0A), attempt: 2, wait: .milliseconds(500), reopeningTransport: false).description
        XCTAssertEqual(line, "controller down reason=\"hardware error 0xa\" attempt=2 retry_in_s=0.5 reopen_transport=false")
        XCTAssertEqual(HostLogEvent.scanningStarted(ScanTiming(interval: 160, window: 80), .legacy).description,
                       "controller up scanning family=legacy interval_ms=100.0 window_ms=50.0")
    }
}
