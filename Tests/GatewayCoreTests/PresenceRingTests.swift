import EventLoop
import XCTest
@testable import GatewayCore

/// The rings keep sample times as Int32 milliseconds after an epoch that moves forward
/// every ~12 days; a visit across that move must be decided as if nothing happened.
final class PresenceRingTests: XCTestCase {
    /// The instant (s) at which the first rebase happens when the epoch is 0.
    static let rebaseSeconds = Double(PresenceEngine.ringRebaseAfterMilliseconds) / 1000

    /// A walk-in across `start`: strong for 4 s, weak for 8 s, then silence until the leave.
    private func visit(_ h: inout PresenceHarness, start: Double) {
        h.samples(-60, from: start, to: start + 4, every: 0.5)
        h.samples(-90, from: start + 4, to: start + 12, every: 0.5)
        h.advance(to: start + 400)
    }

    private struct Decided: Equatable {
        var offsetNanoseconds: Int64
        var rssiSeries: [Int]
    }

    private func decided(_ decisions: [PresenceDecision], since start: Double) -> [Decided] {
        decisions.map { Decided(offsetNanoseconds: $0.timestamp.nanoseconds - seconds(start).nanoseconds, rssiSeries: $0.rssiSeries) }
    }

    func testVisitAcrossTheRingRebaseIsDecidedAsWithoutIt() {
        let start = Self.rebaseSeconds - 2
        // One early sample sets the epoch at 0, so the visit's samples cross the rebase.
        var crossing = PresenceHarness()
        crossing.sample(-90, at: 0)
        visit(&crossing, start: start)
        XCTAssertGreaterThan(crossing.engine.ringEpoch, 0, "the epoch moved: the rebase happened")

        // The same visit in an engine whose epoch is the visit's first sample.
        var fresh = PresenceHarness()
        fresh.advance(to: start - 1)
        visit(&fresh, start: start)
        XCTAssertEqual(fresh.engine.ringEpoch, seconds(start).nanoseconds, "no rebase in the reference engine")

        XCTAssertEqual(crossing.checkins.count, 1)
        XCTAssertEqual(crossing.checkouts.count, 1)
        XCTAssertEqual(decided(crossing.checkins, since: start), decided(fresh.checkins, since: start))
        XCTAssertEqual(decided(crossing.checkouts, since: start), decided(fresh.checkouts, since: start))
    }

    func testSamplesOlderThanARebaseNeverReturnToTheWindow() {
        var settings = PresenceSettings()
        settings.window = .seconds(3)
        settings.minSamples = 2
        var h = PresenceHarness(settings: settings)
        // Two strong samples, then nothing until long after a rebase (far beyond Int32 ms).
        h.sample(-50, at: 0)
        h.sample(-50, at: 0.5)
        h.advance(to: 3 * Self.rebaseSeconds)
        let checkinsBefore = h.checkins.count
        // One sample alone is below min_samples: the stale ones must not count with it.
        h.sample(-50, at: 3 * Self.rebaseSeconds + 1)
        XCTAssertEqual(h.checkins.count, checkinsBefore, "a stale sample counted towards min_samples")
        h.sample(-50, at: 3 * Self.rebaseSeconds + 1.5)
        XCTAssertEqual(h.checkins.count, checkinsBefore + 1)
        XCTAssertEqual(h.checkins.last?.rssiSeries, [-50, -50])
    }
}
