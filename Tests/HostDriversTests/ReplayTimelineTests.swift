import EventLoop
import HostDrivers
import XCTest

final class ReplayTimelineTests: XCTestCase {
    private let origin = Instant(nanoseconds: 5_000_000_000)
    private let recorded: Int64 = 1_740_816_000_000_000

    func testRecordedTimesKeepTheirDistancesFromTheFirst() {
        var timeline = ReplayTimeline(origin: origin, recordedMicroseconds: recorded)
        XCTAssertEqual(timeline.instant(forRecorded: recorded), origin)
        XCTAssertEqual(timeline.instant(forRecorded: recorded + 1_500_000).nanoseconds, origin.nanoseconds + 1_500_000_000)
        XCTAssertEqual(timeline.instant(forRecorded: recorded + 3_600_000_001).nanoseconds, origin.nanoseconds + 3_600_000_001_000)
        XCTAssertEqual(timeline.latest.nanoseconds, origin.nanoseconds + 3_600_000_001_000)
    }

    func testTimeNeverGoesBackwards() {
        var timeline = ReplayTimeline(origin: origin, recordedMicroseconds: recorded)
        let later = timeline.instant(forRecorded: recorded + 10_000_000)
        XCTAssertEqual(timeline.instant(forRecorded: recorded + 2_000_000), later, "a clock set back mid-capture")
        XCTAssertEqual(timeline.instant(forRecorded: recorded - 86_400_000_000), later)
        XCTAssertEqual(timeline.instant(forRecorded: recorded + 10_000_001).nanoseconds, later.nanoseconds + 1000)
    }

    func testAbsurdTimestampsSaturateInsteadOfTrapping() {
        var timeline = ReplayTimeline(origin: origin, recordedMicroseconds: recorded)
        XCTAssertEqual(timeline.instant(forRecorded: .min), origin)
        XCTAssertEqual(timeline.instant(forRecorded: .max).nanoseconds, .max)
        var fromTheEnd = ReplayTimeline(origin: origin, recordedMicroseconds: .min)
        XCTAssertEqual(fromTheEnd.instant(forRecorded: .max).nanoseconds, .max)
        XCTAssertEqual(fromTheEnd.instant(forRecorded: 0).nanoseconds, .max, "after .max, nothing earlier")
    }
}
