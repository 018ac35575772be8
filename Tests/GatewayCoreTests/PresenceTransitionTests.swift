import EventLoop
import XCTest
@testable import GatewayCore

/// Every transition of docs/presence.md, one at a time, on a virtual clock
/// (defaults: enter −70, exit −75, window 3 s, 2 samples, lost 10 s, leave 180 s, away 60 s).
final class PresenceTransitionTests: XCTestCase {
    func testAnySampleMovesOutsideToNearbyWithoutEvent() {
        var h = PresenceHarness()
        XCTAssertEqual(h.state(), .outside)
        XCTAssertNil(h.engine.nextDeadline)
        h.sample(-95, at: 1)
        XCTAssertEqual(h.state(), .nearby)
        XCTAssertEqual(h.transitions.map(\.to), [.nearby])
        XCTAssertEqual(h.transitions.first?.at, seconds(1))
        XCTAssertTrue(h.checkins.isEmpty)
        XCTAssertEqual(h.engine.nextDeadline, seconds(61), "the away timer runs from the last sample")
    }

    func testCheckinNeedsMinSamplesAboveEnter() throws {
        var h = PresenceHarness()
        h.sample(-60, at: 0)
        XCTAssertEqual(h.state(), .nearby, "one sample is fewer than min_samples")
        h.sample(-61, at: 0.5)
        XCTAssertEqual(h.state(), .present)
        let checkin = try XCTUnwrap(h.checkins.first)
        XCTAssertEqual(h.checkins.count, 1)
        XCTAssertEqual(checkin.personId, "p1")
        XCTAssertEqual(checkin.tagId, "t1")
        XCTAssertEqual(checkin.address, PresenceHarness.address(0))
        XCTAssertEqual(checkin.timestamp, seconds(0.5))
        XCTAssertEqual(checkin.visitStart, seconds(0.5))
        XCTAssertEqual(checkin.decidedAt, seconds(0.5))
        XCTAssertEqual(checkin.visitStartWallMilliseconds, PresenceHarness.wallOrigin + 500)
        XCTAssertEqual(checkin.rssiSeries, [-60, -61])
        XCTAssertEqual(checkin.txPower, -59)
        XCTAssertNil(checkin.handshake)
    }

    func testEnterThresholdIsStrictAndEvenMedianRoundsDown() {
        var h = PresenceHarness()
        h.sample(-70, at: 0)
        h.sample(-70, at: 0.5)
        XCTAssertEqual(h.state(), .nearby, "−70 is not above enter_rssi −70")
        var g = PresenceHarness()
        g.sample(-70, at: 0)
        g.sample(-69, at: 0.5)
        XCTAssertEqual(g.state(), .nearby, "mean of −70 and −69 rounds down to −70")
        g.sample(-69, at: 1)
        XCTAssertEqual(g.state(), .present, "median of −70, −69, −69 is −69")
    }

    func testSamplesOutsideTheWindowDoNotCount() {
        var h = PresenceHarness()
        h.sample(-60, at: 0)
        h.sample(-60, at: 3.0)
        XCTAssertEqual(h.state(), .nearby, "the window is (t − 3 s, t]: the sample at 0 is out at 3.0")
        h.sample(-60, at: 3.5)
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.checkins.first?.rssiSeries, [-60, -60])
    }

    func testMedianIgnoresASingleSpike() {
        var h = PresenceHarness()
        h.samples(-80, from: 0, to: 5)
        h.sample(-50, at: 5)
        XCTAssertEqual(h.state(), .nearby, "one strong sample among weak ones does not move the median")
    }

    func testPresentBecomesUnconfirmedAtExitAndHoldsInTheHysteresisBand() {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 2)
        h.samples(-72, from: 2, to: 10)
        XCTAssertEqual(h.state(), .present, "−72 is between exit and enter: no change")
        h.samples(-80, from: 10, to: 11.5)
        // Six samples in the window; at 11.0 three are −80, three −72: mean of middles −76.
        let unconfirmed = h.transitions.first { $0.to == .unconfirmed }
        XCTAssertEqual(unconfirmed?.at, seconds(11.0))
        XCTAssertEqual(h.state(), .unconfirmed)
        XCTAssertTrue(h.checkouts.isEmpty, "no event on PRESENT → UNCONFIRMED")
        XCTAssertLessThanOrEqual(h.engine.nextDeadline ?? .zero, seconds(191), "never later than the real deadline")
        h.samples(-80, from: 11.5, to: 191)
        XCTAssertTrue(h.checkouts.isEmpty)
        h.advance(to: 191)
        XCTAssertEqual(h.checkouts.first?.decidedAt, seconds(191), "leave timer: 180 s from 11.0")
    }

    func testUnconfirmedBackToPresentIsTheSameVisit() {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 5)
        h.samples(-85, from: 5, to: 60)
        XCTAssertEqual(h.state(), .unconfirmed)
        h.samples(-60, from: 60, to: 70)
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.checkins.count, 1)
        XCTAssertTrue(h.checkouts.isEmpty)
        h.samples(-85, from: 70, to: 300)
        XCTAssertEqual(h.checkouts.count, 1)
        XCTAssertEqual(h.checkouts.first?.visitStart, h.checkins.first?.visitStart, "one visit from checkin to checkout")
    }

    func testLeaveTimerEmitsCheckoutAndReturnsToNearbyWhenStillHeard() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 5)
        h.samples(-85, from: 5, to: 400)
        let since = try XCTUnwrap(h.transitions.first { $0.to == .unconfirmed }?.at)
        let checkout = try XCTUnwrap(h.checkouts.first)
        XCTAssertEqual(h.checkouts.count, 1)
        XCTAssertEqual(checkout.timestamp, since, "checkout timestamp: when UNCONFIRMED began")
        XCTAssertEqual(checkout.decidedAt, since + .seconds(180), "decidedAt: when the leave timer fired")
        XCTAssertEqual(checkout.visitStart, h.checkins.first?.visitStart)
        XCTAssertEqual(checkout.timestampWallMilliseconds, PresenceHarness.wallOrigin + since.nanoseconds / 1_000_000)
        XCTAssertEqual(checkout.rssiSeries.count, 6, "the deciding window when UNCONFIRMED began")
        XCTAssertNil(checkout.handshake)
        XCTAssertEqual(h.state(), .nearby, "still heard: NEARBY, not OUTSIDE")
        XCTAssertEqual(h.transitions.last?.to, .nearby)
    }

    func testLostThenLeaveEndsOutsideWhenSilentLongerThanAway() throws {
        var h = PresenceHarness()
        h.sample(-60, at: 0)
        h.sample(-60, at: 0.5)
        h.advance(to: 10.4)
        XCTAssertEqual(h.state(), .present)
        h.advance(to: 10.5)
        XCTAssertEqual(h.state(), .unconfirmed, "no sample for lost_after_s")
        h.advance(to: 190.4)
        XCTAssertTrue(h.checkouts.isEmpty)
        h.advance(to: 190.5)
        let checkout = try XCTUnwrap(h.checkouts.first)
        XCTAssertEqual(checkout.timestamp, seconds(10.5))
        XCTAssertEqual(checkout.decidedAt, seconds(190.5))
        XCTAssertEqual(checkout.rssiSeries, [], "the tag was silent when UNCONFIRMED began")
        XCTAssertEqual(h.state(), .outside, "silent for 190 s ≥ away_after_s")
        XCTAssertEqual(h.transitions.map(\.to), [.nearby, .present, .unconfirmed, .outside])
        XCTAssertNil(h.engine.nextDeadline)
    }

    func testNearbyBecomesOutsideAfterAway() {
        var h = PresenceHarness()
        h.sample(-90, at: 0)
        h.sample(-90, at: 5)
        h.advance(to: 64.9)
        XCTAssertEqual(h.state(), .nearby)
        h.advance(to: 65)
        XCTAssertEqual(h.state(), .outside)
        XCTAssertEqual(h.transitions.last?.at, seconds(65))
        XCTAssertTrue(h.checkins.isEmpty && h.checkouts.isEmpty)
    }

    func testLostSamplesComeBackInTimeSameVisit() {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 5)
        h.advance(to: 40)
        XCTAssertEqual(h.state(), .unconfirmed)
        h.sample(-60, at: 40)
        XCTAssertEqual(h.state(), .unconfirmed, "one sample is not a valid filter value")
        h.sample(-61, at: 40.5)
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.checkins.count, 1)
        XCTAssertTrue(h.checkouts.isEmpty)
        // Gaps shorter than lost_after_s do nothing at all.
        h.sample(-60, at: 49)
        h.sample(-60, at: 58)
        XCTAssertEqual(h.state(), .present)
    }

    func testLateAdvanceDecidesAtNowWithStateTimesAtDeadlines() throws {
        var h = PresenceHarness()
        h.sample(-60, at: 0)
        h.sample(-60, at: 0.5)
        let events = h.engine.advance(to: seconds(500))
        let checkout = try XCTUnwrap(events.compactMap { if case let .checkout(d) = $0 { d } else { nil } }.first)
        XCTAssertEqual(checkout.timestamp, seconds(10.5))
        XCTAssertEqual(checkout.decidedAt, seconds(500))
        XCTAssertEqual(h.engine.state(of: "p1"), .outside)
    }

    func testASampleAfterAnOverdueLeaveTimerChecksOutFirst() throws {
        var h = PresenceHarness()
        h.sample(-60, at: 0)
        h.sample(-60, at: 0.5)
        // The driver missed every timer; the next sample still sees the visit end first.
        let first = h.engine.sample(tagIndex: 0, rssi: -60, address: PresenceHarness.address(0), addressType: .randomDevice,
                                    txPower: nil, at: seconds(300))
        XCTAssertEqual(first.filter { if case .checkout = $0 { true } else { false } }.count, 1)
        XCTAssertEqual(h.engine.state(of: "p1"), .nearby)
        let second = h.engine.sample(tagIndex: 0, rssi: -60, address: PresenceHarness.address(0), addressType: .randomDevice,
                                     txPower: nil, at: seconds(300.5))
        let checkin = try XCTUnwrap(second.compactMap { if case let .checkin(d) = $0 { d } else { nil } }.first)
        XCTAssertEqual(checkin.visitStart, seconds(300.5), "a new visit")
    }

    func testUntrustedInputIsCountedNotFatal() {
        var h = PresenceHarness()
        for index in [-1, 1, 1 << 40, Int.max, Int.min] {
            XCTAssertEqual(h.engine.sample(tagIndex: index, rssi: -60, address: .init(rawValue: 1), addressType: .publicDevice,
                                           txPower: nil, at: seconds(1)), [])
        }
        for rssi in [127, 21, -128, Int.max, Int.min] {
            XCTAssertEqual(h.engine.sample(tagIndex: 0, rssi: rssi, address: .init(rawValue: 1), addressType: .publicDevice,
                                           txPower: Int.max, at: seconds(1)), [])
        }
        var huge = PresenceEngine(settings: PresenceSettings(),
                                  persons: [PresencePerson(id: "x", tags: [PresenceTag(index: Int.max, id: "big"),
                                                                           PresenceTag(index: -3, id: "neg")])])
        XCTAssertEqual(huge.sample(tagIndex: Int.max, rssi: -60, address: .init(rawValue: 1), addressType: .publicDevice,
                                   txPower: nil, at: seconds(1)), [], "a wild configured index is refused, not allocated for")
        XCTAssertEqual(h.engine.counters.unknownTag, 5)
        XCTAssertEqual(h.engine.counters.invalidRSSI, 5)
        XCTAssertEqual(h.state(), .outside)
        // Time going backwards is taken as the newest time seen.
        h.sample(-60, at: 10)
        _ = h.engine.sample(tagIndex: 0, rssi: -60, address: .init(rawValue: 1), addressType: .publicDevice,
                            txPower: Int.min, at: seconds(2))
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.engine.counters.checkins, 1)
    }

    func testTinySampleCapKeepsTheNewestSamples() {
        var settings = PresenceSettings()
        settings.samplesPerTag = 2
        var h = PresenceHarness(settings: settings)
        h.samples(-90, from: 0, to: 1, every: 0.1)
        h.sample(-60, at: 1.0)
        h.sample(-60, at: 1.05)
        XCTAssertEqual(h.state(), .present, "only the 2 newest samples are kept")
        XCTAssertEqual(h.checkins.first?.rssiSeries, [-60, -60])
    }
}
