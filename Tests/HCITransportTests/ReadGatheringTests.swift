import EventLoop
import HCI
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

    /// By transport: at a crowded door (3,000 reports a second) a socket gathers a second's
    /// reports, a serial line no more than its tty buffer holds (1,000 reports, 45 KB).
    func testASerialLineGathersWhatItsBufferHolds() {
        for (spec, expected) in [(TransportSpec.userChannel(index: 0), Duration.seconds(1)),
                                 (.tcp(host: "127.0.0.1", port: 9000), .seconds(1)),
                                 (.serial(path: "/dev/ttyAMA0", baud: 1_000_000), .nanoseconds(333_333_333))] {
            var gathering = ReadGathering.forTransport(spec)
            _ = gathering.pause(at: at(0))
            gathering.read(advertisingReports: 120)  // 40 ms at 3,000 a second
            XCTAssertEqual(gathering.pause(at: at(40)), expected, "\(spec)")
        }
        // A quiet serial line waits at most half a second.
        var serial = ReadGathering.forTransport(.serial(path: "/dev/ttyAMA0", baud: 1_000_000))
        _ = serial.pause(at: at(0))
        serial.read(advertisingReports: 10)
        XCTAssertEqual(serial.pause(at: at(40)), .milliseconds(500))
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
