import EventLoop
import XCTest
@testable import GatewayCore
import AdvertisingFixtures
import SplitMix

/// Longer stories: noise at the threshold, persons with several tags, proofs, reloads.
final class PresenceScenarioTests: XCTestCase {
    /// ±5 dB of noise around −72 dBm (enter −70, exit −75) for 30 simulated minutes:
    /// hysteresis, the median and the leave debounce keep it to at most one visit.
    func testPingPongNoiseGivesAtMostOneVisit() {
        for seed in UInt64(1) ... 20 {
            let h = Self.noise(seed: seed, settings: PresenceSettings())
            XCTAssertLessThanOrEqual(h.checkins.count, 1, "seed \(seed)")
            XCTAssertLessThanOrEqual(h.checkouts.count, 1, "seed \(seed)")
            XCTAssertLessThanOrEqual(h.checkouts.count, h.checkins.count, "seed \(seed)")
        }
        // The control: without a median, hysteresis and debounce the same noise flaps,
        // so the assertions above do measure something.
        let naive = PresenceSettings(enterRSSI: -72, exitRSSI: -73, window: .milliseconds(100), minSamples: 1,
                                     lostAfter: .seconds(10), leaveAfter: .milliseconds(100))
        XCTAssertGreaterThan(Self.noise(seed: 1, settings: naive).checkins.count, 20)
    }

    /// 30 minutes of −72 ± 5 dBm from one tag advertising about every 700 ms, a fifth of
    /// the reports lost.
    static func noise(seed: UInt64, settings: PresenceSettings) -> PresenceHarness {
        var rng = SplitMix64(seed: seed)
        var h = PresenceHarness(settings: settings)
        var t = 0.0
        var samples = 0
        while t < 1800 {
            t += 0.6 + Double(rng.next() % 200) / 1000
            if rng.next() % 5 == 0 { continue }
            h.sample(-72 + Int(rng.next() % 11) - 5, at: t)
            samples += 1
        }
        XCTAssertGreaterThan(samples, 1500)
        return h
    }

    static let twoTags = [PresencePerson(id: "p1", tags: [PresenceTag(index: 0, id: "a"), PresenceTag(index: 1, id: "b")])]

    func testStrongestTagDecides() throws {
        var h = PresenceHarness(persons: Self.twoTags)
        var t = 0.0
        while t < 3 {
            h.sample(-85, at: t, tag: 0)
            h.sample(-62, at: t + 0.1, tag: 1)
            t += 0.5
        }
        let checkin = try XCTUnwrap(h.checkins.first)
        XCTAssertEqual(h.checkins.count, 1)
        XCTAssertEqual(checkin.tagId, "b")
        XCTAssertEqual(checkin.tagIndex, 1)
        XCTAssertEqual(checkin.address, PresenceHarness.address(1))
        XCTAssertTrue(checkin.rssiSeries.allSatisfy { $0 == -62 }, "the deciding tag's own samples")
    }

    func testOneTagGoingSilentDoesNotEndTheVisit() {
        var h = PresenceHarness(persons: Self.twoTags)
        var t = 0.0
        while t < 5 {
            h.sample(-60, at: t, tag: 0)
            h.sample(-65, at: t + 0.1, tag: 1)
            t += 0.5
        }
        XCTAssertEqual(h.state(), .present)
        // Tag a (the stronger one) goes silent; b alone keeps the visit open.
        while t < 600 {
            h.sample(-66, at: t, tag: 1)
            t += 0.7
        }
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.transitions.map(\.to), [.nearby, .present])
        XCTAssertTrue(h.checkouts.isEmpty)
        // Both silent: lost, then the leave debounce, then one checkout.
        h.advance(to: t + 300)
        XCTAssertEqual(h.checkouts.count, 1)
        XCTAssertEqual(h.checkouts.first?.tagId, "b", "the last heard tag stands for the visit")
    }

    func testAWeakSecondTagDoesNotDragThePersonOut() {
        var h = PresenceHarness(persons: Self.twoTags)
        var t = 0.0
        while t < 120 {
            h.sample(-60, at: t, tag: 0)
            h.sample(-95, at: t + 0.1, tag: 1)
            t += 0.5
        }
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.checkins.count, 1)
        XCTAssertFalse(h.transitions.contains { $0.to == .unconfirmed })
    }

    func testLinkLossOfAConnectionTrackedTag() throws {
        var h = PresenceHarness(persons: Self.twoTags)
        h.samples(-60, from: 0, to: 2, tag: 0)
        XCTAssertEqual(h.state(), .present)
        h.events += h.engine.linkLost(tagIndex: 0, at: seconds(2))
        XCTAssertEqual(h.state(), .unconfirmed, "a link loss starts the leave debounce at once")
        h.samples(-60, from: 3, to: 5, tag: 0)
        XCTAssertEqual(h.state(), .present, "reconnected in time: same visit")
        // With the other tag strong, a link loss changes nothing.
        h.samples(-62, from: 5, to: 8, tag: 1)
        h.events += h.engine.linkLost(tagIndex: 0, at: seconds(8))
        XCTAssertEqual(h.state(), .present)
        XCTAssertEqual(h.checkins.count, 1)
        XCTAssertTrue(h.checkouts.isEmpty)
    }

    // MARK: Proof hooks

    func testRequireProofWaitsInNearbyAndSaysWhyOnce() {
        var h = PresenceHarness(requireProof: true)
        h.samples(-60, from: 0, to: 30)
        XCTAssertEqual(h.state(), .nearby)
        XCTAssertTrue(h.checkins.isEmpty)
        XCTAssertEqual(h.waits, [.noValidProof], "once per attempt, not per sample")
        XCTAssertTrue(h.engine.wantsProof(tagIndex: 0, at: h.now))
        h.events += h.engine.proofSucceeded(tagIndex: 0, at: seconds(30.2), roundTripMilliseconds: 180)
        XCTAssertEqual(h.state(), .present, "the proof lets the waiting person in at once")
        XCTAssertEqual(h.checkins.first?.handshake, .init(ok: true, roundTripMilliseconds: 180))
        XCTAssertEqual(h.checkins.first?.visitStart, seconds(30.2))
        XCTAssertFalse(h.engine.wantsProof(tagIndex: 0, at: h.now))
    }

    /// Found by the property test: a proof opening the visit after the last sample must not
    /// make the visit's silence (and its checkout timestamp) start before the visit.
    func testLostTimerCountsFromAProofOpenedVisit() throws {
        var h = PresenceHarness(requireProof: true)
        h.samples(-60, from: 0, to: 2)
        h.events += h.engine.proofSucceeded(tagIndex: 0, at: seconds(2.5), roundTripMilliseconds: 100)
        XCTAssertEqual(h.checkins.first?.visitStart, seconds(2.5))
        h.advance(to: 400)
        let checkout = try XCTUnwrap(h.checkouts.first)
        XCTAssertEqual(checkout.timestamp, seconds(12.5), "lost_after_s from the visit's start, not from 1.5")
    }

    func testProofOlderThanTTLDoesNotCount() {
        var settings = PresenceSettings()
        settings.proofTTL = .seconds(60)
        var h = PresenceHarness(settings: settings, requireProof: true)
        _ = h.engine.proofSucceeded(tagIndex: 0, at: seconds(0), roundTripMilliseconds: 90)
        h.samples(-60, from: 60, to: 70)
        XCTAssertEqual(h.state(), .nearby)
        XCTAssertEqual(h.waits, [.noValidProof])
        var fresh = PresenceHarness(settings: settings, requireProof: true)
        _ = fresh.engine.proofSucceeded(tagIndex: 0, at: seconds(0), roundTripMilliseconds: 90)
        fresh.samples(-60, from: 58, to: 60)
        XCTAssertEqual(fresh.state(), .present, "59.5 s old: still valid")
        XCTAssertEqual(fresh.checkins.first?.handshake?.roundTripMilliseconds, 90)
    }

    func testFailedProofAndLockout() {
        var h = PresenceHarness(requireProof: true)
        _ = h.engine.proofSucceeded(tagIndex: 0, at: seconds(0), roundTripMilliseconds: 90)
        h.engine.proofFailed(tagIndex: 0, at: seconds(1))
        h.samples(-60, from: 2, to: 5)
        XCTAssertEqual(h.state(), .nearby, "a failure voids the earlier proof")
        h.engine.tagLockedOut(tagIndex: 0, until: seconds(300))
        XCTAssertFalse(h.engine.wantsProof(tagIndex: 0, at: seconds(5)))
        XCTAssertEqual(h.engine.proofSucceeded(tagIndex: 0, at: seconds(10), roundTripMilliseconds: 50), [],
                       "proofs of a locked tag are ignored")
        h.samples(-60, from: 5, to: 60)
        XCTAssertEqual(h.state(), .nearby)
        XCTAssertEqual(h.waits, [.noValidProof], "reported once per attempt")
        // The attempt ends (away), a new one starts while still locked.
        h.advance(to: 200)
        h.samples(-60, from: 200, to: 205)
        XCTAssertEqual(h.waits, [.noValidProof, .lockedOut])
        h.events += h.engine.proofSucceeded(tagIndex: 0, at: seconds(301), roundTripMilliseconds: 70)
        h.samples(-60, from: 301, to: 303)
        XCTAssertEqual(h.state(), .present, "after the lockout a fresh proof counts")
    }

    // MARK: Reload

    func testReloadKeepsStateChecksOutRemovedPersonsAndAppliesNewThresholds() throws {
        let persons = [
            PresencePerson(id: "p1", tags: [PresenceTag(index: 0, id: "t1")]),
            PresencePerson(id: "p2", tags: [PresenceTag(index: 1, id: "t2")]),
        ]
        var h = PresenceHarness(persons: persons)
        var t = 0.0
        while t < 5 {
            h.sample(-60, at: t, tag: 0)
            h.sample(-65, at: t + 0.1, tag: 1)
            t += 0.5
        }
        XCTAssertEqual(h.engine.openVisits, 2)
        // p2 removed; p1's tag gets a new matcher index; enter/exit raised above p1's signal.
        var settings = PresenceSettings()
        settings.enterRSSI = -50
        settings.exitRSSI = -55
        let events = h.engine.reconfigure(settings: settings,
                                          persons: [PresencePerson(id: "p1", tags: [PresenceTag(index: 7, id: "t1")])],
                                          at: seconds(5))
        h.events += events
        let checkout = try XCTUnwrap(h.checkouts.first)
        XCTAssertEqual(h.checkouts.count, 1)
        XCTAssertEqual(checkout.personId, "p2")
        XCTAssertEqual(checkout.decidedAt, seconds(5))
        XCTAssertEqual(checkout.visitStart, h.checkins.first { $0.personId == "p2" }?.visitStart)
        XCTAssertEqual(h.engine.state(of: "p1"), .present, "kept without a new checkin")
        XCTAssertNil(h.engine.state(of: "p2"))
        // The next sample is judged by the new exit threshold (−60 ≤ −55).
        h.sample(-60, at: 5.5, tag: 7)
        XCTAssertEqual(h.engine.state(of: "p1"), .unconfirmed)
        XCTAssertEqual(h.checkins.count, 2)
    }
}
