import AttendanceEvents
import EventLoop
import HCI
import XCTest
@testable import GatewayCore
import AdvertisingFixtures
import SplitMix

/// The restart rule of docs/presence.md: a restart in each state, through the persisted bytes.
final class PresenceRestartTests: XCTestCase {
    /// Shuts `h` down at its current time, keeps the records as bytes, and boots a new
    /// engine `downtime` seconds later whose monotonic clock starts again at zero.
    func restart(_ h: PresenceHarness, downtime: Double, file: StaticString = #filePath, line: UInt = #line) -> PresenceHarness {
        let stored = h.engine.records.map { $0.encode() }
        let decoded = stored.compactMap(PersistedPresence.init(decoding:))
        XCTAssertEqual(decoded, h.engine.records, "records survive their bytes", file: file, line: line)
        let shutdownWall = h.engine.wallClock.wallMilliseconds(at: h.now)
        var next = PresenceHarness(settings: h.engine.settings, persons: [PresencePerson(id: "p1", tags: [PresenceTag(index: 0, id: "t1")])])
        let ignored = next.engine.restore(records: decoded, now: .zero, wallNow: shutdownWall + Int64(downtime * 1000))
        XCTAssertEqual(ignored, [], file: file, line: line)
        return next
    }

    func wall(_ h: PresenceHarness, _ instant: Instant) -> Int64 { h.engine.wallClock.wallMilliseconds(at: instant) }

    func testPresentRestartsPresentAndItsCheckoutStillComes() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 20)
        let checkin = try XCTUnwrap(h.checkins.first)
        let lastSampleWall = wall(h, seconds(19.5))
        h.advance(to: 21)
        var r = restart(h, downtime: 30)
        XCTAssertEqual(r.state(), .present)
        XCTAssertEqual(r.engine.openVisits, 1)
        r.advance(to: 400)
        XCTAssertTrue(r.checkins.isEmpty, "no second checkin")
        let checkout = try XCTUnwrap(r.checkouts.first)
        XCTAssertEqual(r.checkouts.count, 1)
        XCTAssertEqual(checkout.visitStartWallMilliseconds, checkin.visitStartWallMilliseconds, "the same visit")
        XCTAssertEqual(checkout.timestampWallMilliseconds, lastSampleWall + 10_000,
                       "lost at the last sample before shutdown plus lost_after_s, as without the restart")
        XCTAssertEqual(checkout.decidedAtWallMilliseconds, lastSampleWall + 190_000)
        // Same visit start → the server can pair the checkout with the checkin's key.
        let key = { (type: AttendanceEventType, ms: Int64) in
            IdempotencyKey.make(personId: "p1", gatewayId: "g", type: type, visitStartMilliseconds: ms)
        }
        XCTAssertEqual(key(.checkout, checkout.visitStartWallMilliseconds), key(.checkout, checkin.visitStartWallMilliseconds))
    }

    func testPresentRestartHeardAgainIsTheSameVisit() {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 20)
        var r = restart(h, downtime: 5)
        r.samples(-60, from: 0, to: 30)
        XCTAssertEqual(r.state(), .present)
        XCTAssertTrue(r.checkins.isEmpty, "no second checkin for an open visit")
        r.advance(to: 400)
        XCTAssertEqual(r.checkouts.count, 1)
        XCTAssertEqual(r.checkouts.first?.visitStartWallMilliseconds, h.checkins.first?.visitStartWallMilliseconds)
    }

    func testUnconfirmedKeepsItsTimerAcrossARestart() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 5)
        h.samples(-90, from: 5, to: 30)
        let since = try XCTUnwrap(h.transitions.first { $0.to == .unconfirmed }?.at)
        let sinceWall = wall(h, since)
        var r = restart(h, downtime: 60)
        XCTAssertEqual(r.state(), .unconfirmed)
        r.advance(to: 500)
        let checkout = try XCTUnwrap(r.checkouts.first)
        XCTAssertEqual(checkout.timestampWallMilliseconds, sinceWall)
        XCTAssertEqual(checkout.decidedAtWallMilliseconds, sinceWall + 180_000)
        XCTAssertTrue(r.checkins.isEmpty)
    }

    func testDowntimeLongerThanTheHoldLimitChecksOutAtOnce() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 10)
        let lastWall = wall(h, seconds(9.5))
        var r = restart(h, downtime: 3601)
        XCTAssertNotNil(r.engine.nextDeadline)
        XCTAssertFalse(r.engine.holdsRestoredVisits, "last heard over an hour ago: not held")
        let events = r.engine.advance(to: .zero)
        let checkout = try XCTUnwrap(events.compactMap { if case let .checkout(d) = $0 { d } else { nil } }.first)
        XCTAssertEqual(checkout.timestampWallMilliseconds, lastWall + 10_000)
        XCTAssertEqual(checkout.decidedAtWallMilliseconds, wall(h, h.now) + 3_601_000, "decided at restart")
        XCTAssertEqual(r.state(), .outside)
    }

    func testDowntimeLongerThanTheDebounceWaitsForTheScanThenChecksOutStampedAtTheLastSample() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 10)
        let lastWall = wall(h, seconds(9.5))
        var r = restart(h, downtime: 600)
        XCTAssertTrue(r.engine.advance(to: seconds(9.999)).isEmpty, "the scan has not had lost_after_s to hear them")
        XCTAssertEqual(r.state(), .present)
        let events = r.engine.advance(to: seconds(10))
        let checkout = try XCTUnwrap(events.compactMap { if case let .checkout(d) = $0 { d } else { nil } }.first)
        XCTAssertEqual(checkout.timestampWallMilliseconds, lastWall + 10_000, "UNCONFIRMED at the last sample + lost_after_s")
        XCTAssertEqual(checkout.decidedAtWallMilliseconds, wall(h, h.now) + 610_000)
        XCTAssertEqual(r.state(), .outside)
    }

    func testARestoredVisitWaitsForTheScanHoweverLateItStarts() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 10)
        let lastWall = wall(h, seconds(9.5))
        let records = h.engine.records
        var engine = PresenceEngine(settings: h.engine.settings, persons: [PresencePerson(id: "p1", tags: [PresenceTag(index: 0, id: "t1")])])
        engine.restore(records: records, now: .zero, wallNow: wall(h, h.now) + 5000, scanStartsNow: false)
        XCTAssertNil(engine.nextTransition(), "no timer runs before the scan")
        XCTAssertTrue(engine.advance(to: seconds(300)).isEmpty)
        engine.scanningStarted(at: seconds(300))
        XCTAssertEqual(engine.nextTransition(), seconds(310))
        XCTAssertTrue(engine.advance(to: seconds(309.9)).isEmpty)
        let events = engine.advance(to: seconds(310))
        let checkout = try XCTUnwrap(events.compactMap { if case let .checkout(d) = $0 { d } else { nil } }.first)
        XCTAssertEqual(checkout.timestampWallMilliseconds, lastWall + 10_000)
        XCTAssertFalse(engine.holdsRestoredVisits)
    }

    func testAPersonHeardWithinTheHoldKeepsTheirVisitAfterADowntimeLongerThanTheDebounce() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 10)
        var r = restart(h, downtime: 600)
        r.samples(-60, from: 0.5, to: 60)
        XCTAssertEqual(r.state(), .present)
        XCTAssertTrue(r.checkins.isEmpty && r.checkouts.isEmpty, "the same visit, no event")
        r.advance(to: 400)
        let checkout = try XCTUnwrap(r.checkouts.first)
        XCTAssertEqual(checkout.visitStartWallMilliseconds, h.checkins.first?.visitStartWallMilliseconds)
        XCTAssertEqual(checkout.timestampWallMilliseconds, wall(r, seconds(59.5)) + 10_000)
    }

    func testARestoredPersonHeardBetweenTheThresholdsStaysPresent() {
        var h = PresenceHarness()
        h.samples(-72, from: 0, to: 2)
        h.samples(-60, from: 2, to: 10)
        h.samples(-72, from: 10, to: 20)
        XCTAssertEqual(h.state(), .present, "hysteresis: above exit_rssi keeps a visit")
        var r = restart(h, downtime: 30)
        r.samples(-72, from: 0.5, to: 400)
        XCTAssertEqual(r.state(), .present)
        XCTAssertTrue(r.checkins.isEmpty && r.checkouts.isEmpty)
    }

    func testNearbyKeepsItsAwayTimer() {
        var h = PresenceHarness()
        h.samples(-90, from: 0, to: 10)
        var r = restart(h, downtime: 20)
        XCTAssertEqual(r.state(), .nearby)
        r.advance(to: 39)
        XCTAssertEqual(r.state(), .nearby)
        // Last sample at 9.5, shutdown at 9.5 (+20 s down): away at 69.5 = 40 s after boot.
        r.advance(to: 40)
        XCTAssertEqual(r.state(), .outside)
        XCTAssertTrue(r.checkins.isEmpty && r.checkouts.isEmpty)
    }

    func testOutsideStaysOutside() {
        var h = PresenceHarness()
        h.samples(-90, from: 0, to: 2)
        h.advance(to: 100)
        var r = restart(h, downtime: 1)
        XCTAssertEqual(r.state(), .outside)
        XCTAssertNil(r.engine.nextDeadline)
        r.samples(-60, from: 0, to: 2)
        XCTAssertEqual(r.checkins.count, 1, "a new visit after OUTSIDE")
    }

    func testRestoreIgnoresUnknownPersonsAndNonsense() {
        var engine = PresenceEngine(settings: PresenceSettings(), persons: [PresencePerson(id: "p1", tags: [PresenceTag(index: 0, id: "t1")])])
        let stranger = PersistedPresence(personId: "ghost", state: .present, visitStartWallMilliseconds: 1,
                                         unconfirmedSinceWallMilliseconds: nil, lastSampleWallMilliseconds: 1, tagId: "x",
                                         address: .init(rawValue: 1), addressType: .publicDevice, txPower: nil)
        var noStart = stranger
        noStart.personId = "p1"
        noStart.visitStartWallMilliseconds = nil
        let ignored = engine.restore(records: [stranger, noStart], now: .zero, wallNow: 1_000_000)
        XCTAssertEqual(ignored, [stranger, noStart])
        XCTAssertEqual(engine.state(of: "p1"), .outside)
        // A record from the future (clock set back) is taken as "now", never a crash.
        var future = noStart
        future.visitStartWallMilliseconds = .max
        future.lastSampleWallMilliseconds = .max
        XCTAssertEqual(engine.restore(records: [future], now: .zero, wallNow: 1_000_000), [])
        XCTAssertEqual(engine.state(of: "p1"), .present)
    }

    func testRecordBytesAreRobust() throws {
        let record = PersistedPresence(personId: "u_1001", state: .unconfirmed, visitStartWallMilliseconds: 1_789_012_345_678,
                                       unconfirmedSinceWallMilliseconds: -5, lastSampleWallMilliseconds: nil, tagId: "tag-1001 ✓",
                                       address: BluetoothAddress("C0:11:22:33:44:55")!, addressType: .randomDevice, txPower: -59)
        let encoded = record.encode()
        XCTAssertEqual(PersistedPresence(decoding: encoded), record)
        for length in 0 ..< encoded.count {
            XCTAssertNil(PersistedPresence(decoding: Array(encoded.prefix(length))), "truncated to \(length)")
        }
        XCTAssertNil(PersistedPresence(decoding: encoded + [0]), "trailing bytes")
        var badState = encoded
        badState[5] = 9
        XCTAssertNil(PersistedPresence(decoding: badState))
        var badFlags = encoded
        badFlags[6] = 0xF0
        XCTAssertNil(PersistedPresence(decoding: badFlags))
        var badVersion = encoded
        badVersion[4] = 2
        XCTAssertNil(PersistedPresence(decoding: badVersion))
        var rng = SplitMix64(seed: 99)
        for _ in 0 ..< 20000 {
            var bytes = encoded
            for _ in 0 ..< 1 + Int(rng.next() % 4) {
                bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            if let decoded = PersistedPresence(decoding: bytes) {
                XCTAssertEqual(PersistedPresence(decoding: decoded.encode()), decoded)
            }
            let random = (0 ..< Int(rng.next() % 80)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            _ = PersistedPresence(decoding: random)
        }
    }
}

/// The wall clock may be stepped while a visit is open (NTP's first sync on a Pi without
/// a real-time clock): the checkout must repeat the visit start its checkin carried.
final class PresenceWallClockStepTests: XCTestCase {
    private static let hour: Int64 = 3_600_000

    func testCheckoutRepeatsTheCheckinsVisitStartAfterAStep() {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 2)
        guard let checkin = h.checkins.first else { return XCTFail("no checkin") }
        // NTP steps the clock one hour ahead; the agent follows it.
        h.engine.wallClock = WallClockMapping(anchor: h.now, wallMilliseconds: h.engine.wallClock.wallMilliseconds(at: h.now) + Self.hour)
        h.samples(-90, from: 2, to: 4)
        h.advance(to: 400)
        guard let checkout = h.checkouts.first else { return XCTFail("no checkout") }
        XCTAssertEqual(checkout.visitStartWallMilliseconds, checkin.visitStartWallMilliseconds)
        XCTAssertEqual(checkout.visitStartWallMilliseconds, checkin.timestampWallMilliseconds)
        XCTAssertGreaterThan(checkout.timestampWallMilliseconds, checkin.timestampWallMilliseconds + Self.hour,
                             "times decided after the step follow the new clock")
    }

    func testRestartAfterAClockSetBackKeepsTheRecordedVisitStart() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 2)
        guard let checkin = h.checkins.first, let record = h.engine.record(for: "p1") else { return XCTFail("no visit") }
        XCTAssertEqual(record.visitStartWallMilliseconds, checkin.visitStartWallMilliseconds)
        // The next run's clock is two hours behind the last one's.
        var engine = PresenceEngine(settings: PresenceSettings(), persons: [PresencePerson(id: "p1", tags: [PresenceTag(index: 0, id: "t1")])])
        let wallNow = checkin.timestampWallMilliseconds - 2 * Self.hour
        XCTAssertEqual(engine.restore(records: [record], now: seconds(1000), wallNow: wallNow), [])
        let events = engine.advance(to: seconds(1000 + 400))
        let checkouts = events.compactMap { if case let .checkout(d) = $0 { d } else { nil } }
        XCTAssertEqual(checkouts.count, 1)
        XCTAssertEqual(checkouts.first?.visitStartWallMilliseconds, checkin.visitStartWallMilliseconds)
    }
}
