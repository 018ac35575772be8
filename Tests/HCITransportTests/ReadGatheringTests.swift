import EventLoop
import XCTest
@testable import HCITransport

final class ReadGatheringTests: XCTestCase {
    private func at(_ milliseconds: Int64) -> Instant { .zero + .milliseconds(milliseconds) }

    /// The pause is the time in which `reportsPerWakeUp` reports arrive at the rate measured
    /// since the last pause began, within its bounds.
    func testThePauseIsTheTimeTheWantedReportsTakeAtTheMeasuredRate() {
        var gathering = ReadGathering(reportsPerWakeUp: 1_000, shortest: .milliseconds(40), longest: .milliseconds(250))
        XCTAssertEqual(gathering.pause(at: at(0)), .milliseconds(40), "nothing measured yet: the shortest")
        // 10,000 reports a second: 400 in the 40 ms pause → 1,000 take 100 ms.
        gathering.read(advertisingReports: 400)
        XCTAssertEqual(gathering.pause(at: at(40)), .milliseconds(100))
        // The same rate, now over 100 ms and two reads (one cut at its read limit).
        gathering.read(advertisingReports: 600)
        gathering.read(advertisingReports: 400)
        XCTAssertEqual(gathering.pause(at: at(140)), .milliseconds(100))
        // 3,000 a second would want 333 ms: the longest.
        gathering.read(advertisingReports: 300)
        XCTAssertEqual(gathering.pause(at: at(240)), .milliseconds(250))
        // A burst (20,000 a second) shortens the next pause at once, down to the shortest.
        gathering.read(advertisingReports: 5_000)
        XCTAssertEqual(gathering.pause(at: at(490)), .milliseconds(50))
        gathering.read(advertisingReports: 5_000)
        XCTAssertEqual(gathering.pause(at: at(540)), .milliseconds(40), "100,000 a second: the shortest")
        // Nothing read since: the longest.
        XCTAssertEqual(gathering.pause(at: at(580)), .milliseconds(250))
    }

    /// A fixed gathering ignores the rate.
    func testFixed() {
        var fixed = ReadGathering.fixed(.milliseconds(40))
        XCTAssertEqual(fixed.pause(at: at(0)), .milliseconds(40))
        fixed.read(advertisingReports: 1_000_000)
        XCTAssertEqual(fixed.pause(at: at(1)), .milliseconds(40))
        XCTAssertEqual(fixed.pause(at: at(2)), .milliseconds(40))
    }
}
