import XCTest
@testable import GatewayCore

final class CalibrationReportTests: XCTestCase {
    func testStatisticsAndSuggestion() throws {
        // 20 samples: -60 … -79 in a shuffled order; 100 ms apart.
        let rssi = [-65, -60, -79, -70, -62, -75, -68, -61, -77, -66, -72, -64, -74, -63, -78, -69, -71, -67, -76, -73]
        let times = (0 ..< rssi.count).map { Int64($0) * 100_000_000 }
        let report = try XCTUnwrap(CalibrationReport(rssi: rssi, timesNanoseconds: times))
        XCTAssertEqual(report.count, 20)
        XCTAssertEqual(report.median, -70) // 10th smallest of -79 … -60
        XCTAssertEqual(report.lowerQuartile, -75)
        XCTAssertEqual(report.upperQuartile, -65)
        XCTAssertEqual(report.interquartileRange, 10)
        XCTAssertEqual(report.minimum, -79)
        XCTAssertEqual(report.maximum, -60)
        XCTAssertEqual(report.observedIntervalMilliseconds, 100)
        XCTAssertEqual(report.suggestedEnterRSSI, -76)
        XCTAssertEqual(report.suggestedExitRSSI, -86) // IQR 10 dB > 5 dB minimum
    }

    func testSteadySignalKeepsTheMinimumHysteresis() throws {
        let rssi = Array(repeating: -58, count: 30)
        let times = (0 ..< 30).map { Int64($0) * 700_000_000 }
        let report = try XCTUnwrap(CalibrationReport(rssi: rssi, timesNanoseconds: times))
        XCTAssertEqual(report.suggestedEnterRSSI, -59)
        XCTAssertEqual(report.suggestedExitRSSI, -64)
        XCTAssertEqual(report.observedIntervalMilliseconds, 700)
        XCTAssertTrue(report.render(tag: "t").contains("enter_rssi = -59, exit_rssi = -64"))
    }

    func testNoSamplesGivesNoReport() {
        XCTAssertNil(CalibrationReport(rssi: [], timesNanoseconds: []))
    }

    func testIntervalIsTheMedianGapSoMissedReportsDoNotDoubleIt() throws {
        // Reports every 100 ms with two missed: gaps 100 ×7, 200 ×2.
        let times: [Int64] = [0, 100, 200, 400, 500, 600, 800, 900, 1000, 1100].map { $0 * 1_000_000 }
        let report = try XCTUnwrap(CalibrationReport(rssi: Array(repeating: -60, count: times.count), timesNanoseconds: times))
        XCTAssertEqual(report.observedIntervalMilliseconds, 100)
    }

    func testSuggestionsStayInTheConfigurableRange() throws {
        let report = try XCTUnwrap(CalibrationReport(rssi: [-127, -127, -127], timesNanoseconds: [0, 1, 2]))
        XCTAssertGreaterThanOrEqual(report.suggestedExitRSSI, -127)
        XCTAssertLessThan(report.suggestedExitRSSI, report.suggestedEnterRSSI)
    }
}
