import XCTest
@testable import Forwarder

final class BackoffTests: XCTestCase {
    func testNominalScheduleStartsNearTheSpecsValuesThenDoublesToTheMaximum() {
        let backoff = Backoff(maximum: .seconds(300))
        let millis = (1 ... 12).map { Backoff.milliseconds(backoff.nominalDelay(failures: $0)) }
        XCTAssertEqual(millis, [100, 500, 2_000, 5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000])
        XCTAssertEqual(backoff.nominalDelay(failures: 0), .zero)
        // Absurd attempt counts (a damaged row) neither trap nor exceed the maximum.
        XCTAssertEqual(backoff.nominalDelay(failures: Int.max), .seconds(300))
    }

    func testJitterStaysWithinTwentyPercentAndUnderTheMaximum() {
        let backoff = Backoff(maximum: .seconds(30))
        var source = JitterSource(seed: 42)
        var seen: Set<Int64> = []
        for failures in 1 ... 20 {
            for _ in 0 ..< 50 {
                let nominal = Double(Backoff.milliseconds(backoff.nominalDelay(failures: failures)))
                let delay = Double(Backoff.milliseconds(backoff.delay(failures: failures, unit: source.unit())))
                XCTAssertGreaterThanOrEqual(delay, (nominal * 0.8).rounded(.down))
                XCTAssertLessThanOrEqual(delay, min(nominal * 1.2, 30_000).rounded(.up))
                seen.insert(Int64(delay))
            }
        }
        XCTAssertGreaterThan(seen.count, 100, "jitter spreads the delays")
    }

    func testJitterExtremes() {
        let backoff = Backoff(maximum: .seconds(300))
        XCTAssertEqual(backoff.delay(failures: 3, unit: 0), .milliseconds(1_600))
        XCTAssertEqual(backoff.delay(failures: 3, unit: 1), .milliseconds(2_400))
        XCTAssertEqual(backoff.delay(failures: 3, unit: 0.5), .milliseconds(2_000))
        XCTAssertEqual(backoff.longDelay(unit: 0), .seconds(300))
        XCTAssertEqual(backoff.longDelay(unit: 1), .seconds(240))
    }

    func testSeededSourceIsReproducibleAndUniform() {
        var a = JitterSource(seed: 7)
        var b = JitterSource(seed: 7)
        var c = JitterSource(seed: 8)
        let first = (0 ..< 1_000).map { _ in a.unit() }
        XCTAssertEqual(first, (0 ..< 1_000).map { _ in b.unit() })
        XCTAssertNotEqual(first, (0 ..< 1_000).map { _ in c.unit() })
        XCTAssertTrue(first.allSatisfy { $0 >= 0 && $0 < 1 })
        let mean = first.reduce(0, +) / Double(first.count)
        XCTAssertEqual(mean, 0.5, accuracy: 0.05)
    }
}
