import AttendanceEvents
import EventLoop
import PresenceProof
import XCTest
@testable import GatewayCore

/// The rule of docs/neighbours.md, one door driven by hand with its neighbour's reports.
final class NeighbourRuleTests: XCTestCase {
    let keys = SightingKeys(masterKey: MasterKey(bytes: Array(repeating: 0x5A, count: 32))!)

    func door() -> DoorHarness {
        DoorHarness(DoorHarness.neighbourSetup(persons: 2, id: "door-a", neighbours: .doors(["door-b"]),
                                               settings: DoorHarness.settings))
    }

    /// Door B's report, made now by `door`'s clock.
    func tell(_ door: inout DoorHarness, rssi: Int8?, holds: Bool = false, person: Int = 0) {
        let sightings = rssi.map { [SightingReport.Sighting(person: keys.personHash("p\(person)"), rssi: $0, holds: holds)] } ?? []
        let report = SightingReport(sender: "door-b", wallMilliseconds: door.wall, sightings: sightings)
        door.perform(door.core.neighbourSighting(report.encoded(keys: keys), at: door.now))
    }

    /// Each second door B's report of `neighbourRSSI` and a second of -60 here: after how
    /// many the person is PRESENT (nil: not within `within`).
    func secondsToCheckIn(_ door: inout DoorHarness, neighbourRSSI: Int8, within: Int) -> Int? {
        for second in 0 ..< within {
            tell(&door, rssi: neighbourRSSI)
            door.stay(0, rssi: -60, seconds: 1)
            if door.state(0) == .present { return second }
        }
        return nil
    }

    func testANeighbourHearingThePersonAsWellHoldsTheCheckinBack() {
        var a = door()
        tell(&a, rssi: nil)  // heard: the start's wait is over
        for _ in 0 ..< 5 {
            tell(&a, rssi: -62)
            a.stay(0, rssi: -60, seconds: 1)
        }
        XCTAssertEqual(a.state(0), .nearby, "2 dB ahead is not 6")
        // Its strongest of the last 3 s counts: one weaker report is a moment of fading.
        tell(&a, rssi: -66)
        a.stay(0, rssi: -60, seconds: 1)
        XCTAssertEqual(a.state(0), .nearby, "2 dB ahead of the neighbour's strongest of the last 3 s")
        let checkedInAfter = secondsToCheckIn(&a, neighbourRSSI: -66, within: 8)
        // The lead began once the -62 aged out (3 s), and takes 3 s more, confirmed by a
        // report made 3 s after it began.
        XCTAssertEqual(checkedInAfter, 5, "6 dB ahead for 3 s")
        XCTAssertEqual(a.store.events(.checkin).count, 1)
    }

    /// A neighbour that stops reporting (killed, restarting) still hears whom its last
    /// report named until it has been silent for 10 s (docs/neighbours.md, "The rule");
    /// then the door decides alone for it.
    func testANeighbourThatStopsReportingCountsUntilItIsSilent() {
        var a = door()
        tell(&a, rssi: -55, holds: true)  // B holds the person, heard much better there
        var seconds = 0
        while a.state(0) != .present && seconds < 15 {
            a.stay(0, rssi: -68, seconds: 1)
            seconds += 1
        }
        XCTAssertEqual(a.state(0), .present, "alone once B is silent")
        XCTAssertEqual(a.store.events(.checkin).count, 1)
        // Not before B's silence (10 s after its last report), not at 3 s when its last
        // sighting would have aged out.
        XCTAssertGreaterThanOrEqual(seconds, 10, "B's last report stands until B is silent")
    }

    /// With the bus down no report can come: the last one counts for its 3 s only.
    func testWithTheBusDownTheLastReportCountsForItsThreeSeconds() {
        var a = door()
        tell(&a, rssi: -55, holds: true)
        a.core.siteBus(up: false)
        var seconds = 0
        while a.state(0) != .present && seconds < 15 {
            a.stay(0, rssi: -68, seconds: 1)
            seconds += 1
        }
        XCTAssertEqual(a.state(0), .present)
        XCTAssertLessThan(seconds, 10, "the bus down: the door decides alone without waiting for the silence")
    }

    func testAReportNamesAPersonHeardOnceInTheWindow() {
        var a = door()
        a.hear(0, rssi: -70)
        a.advance(seconds: 1.1)
        XCTAssertEqual(a.state(0), .nearby, "one sample is no filtered value for this door's own decision")
        let report = SightingReport.parse(a.published.last!)!.report
        XCTAssertEqual(report.sightings.map(\.rssi), [-70], "but the neighbours hear that this door hears them")
    }

    /// A person PRESENT here whom the window holds no sample of (advertisements lost for
    /// a few seconds) is still named, at the level last reported, and held: left out, they
    /// would look to the neighbour like nobody hears them here, and a neighbour hearing
    /// them through the wall would check them in at once (docs/neighbours.md, "Sighting
    /// reports"). UNCONFIRMED (lost for `lost_after_s`), they are named only when heard.
    func testAPresentPersonNotHeardForAFewSecondsIsStillReported() throws {
        var a = door()
        tell(&a, rssi: nil)
        a.stay(0, rssi: -66, seconds: 4)
        XCTAssertEqual(a.state(0), .present)
        let before = a.published.count
        a.advance(seconds: 5)
        XCTAssertEqual(a.state(0), .present, "not lost yet (lost_after_s is 10 s)")
        let reports = a.published[before...].map { SightingReport.parse($0)!.report }
        XCTAssertEqual(reports.count, 5)
        for report in reports {
            XCTAssertEqual(report.sightings.map(\.rssi), [-66], "named at the level last reported")
            XCTAssertEqual(report.sightings.map(\.holds), [true])
        }
        a.advance(seconds: 6)
        XCTAssertEqual(a.state(0), .unconfirmed)
        let last = try XCTUnwrap(a.published.last.flatMap { SightingReport.parse($0)?.report })
        XCTAssertTrue(last.isHeartbeat, "lost: named only when heard again")
    }

    /// A checkin here is reported at once, not at the next period (docs/neighbours.md,
    /// "Sighting reports"): the neighbour that held the person checks them out as moved
    /// when it hears of it. A second checkin within 200 ms of that report waits for those
    /// 200 ms, the reports once a second keep their time, and every report carries a later
    /// wall time than the one before.
    func testACheckinIsReportedAtOnce() throws {
        var a = door()
        tell(&a, rssi: nil)
        // Half-way between two periodic reports; p1's samples 50 ms after p0's.
        a.advance(seconds: 0.5)
        let start = a.published.count
        var checkedIn: [Int: Instant] = [:]
        for _ in 0 ..< 10 where checkedIn.count < 2 {
            for n in 0 ..< 2 {
                a.hear(n, rssi: -66)
                if checkedIn[n] == nil, a.state(n) == .present { checkedIn[n] = a.now }
                a.advance(seconds: 0.05)
            }
            a.advance(seconds: 0.9)
        }
        a.advance(seconds: 5)
        let first = try XCTUnwrap(checkedIn[0]), second = try XCTUnwrap(checkedIn[1])
        XCTAssertEqual(second - first, .milliseconds(50))
        let reports = a.published[start...].map { SightingReport.parse($0)!.report }
        let made = Array(a.publishedAt[start...])
        func holds(_ report: SightingReport) -> Set<PersonHash> { Set(report.sightings.filter(\.holds).map(\.person)) }
        let p0 = keys.personHash("p0"), p1 = keys.personHash("p1")
        let firstHolding = try XCTUnwrap(reports.firstIndex { holds($0).contains(p0) })
        XCTAssertEqual(made[firstHolding], first, "p0's checkin reported at once, not half a period later")
        XCTAssertEqual(holds(reports[firstHolding]), [p0])
        XCTAssertEqual(holds(reports[firstHolding + 1]), [p0, p1])
        XCTAssertEqual(made[firstHolding + 1] - first, .milliseconds(200), "p1's, 50 ms later: 200 ms after the report before")
        // Besides the reports once a second, which keep their time (whole seconds here).
        let periodic = made.enumerated().filter { ![firstHolding, firstHolding + 1].contains($0.offset) }.map(\.element)
        XCTAssertGreaterThan(periodic.count, 5)
        for (earlier, later) in zip(periodic, periodic.dropFirst()) { XCTAssertEqual(later - earlier, .seconds(1)) }
        for (earlier, later) in zip(reports, reports.dropFirst()) {
            XCTAssertLessThan(earlier.wallMilliseconds, later.wallMilliseconds)
        }
    }

    /// A report carries a later wall time than the last (a neighbour takes only newer
    /// ones), also after the clock steps back by less than a second; stepped back further,
    /// it carries the clock, so that it is not refused as `ahead` until the clock catches up.
    func testAReportIsLaterThanTheLastUnlessTheClockSteppedBackFar() {
        var a = door()
        tell(&a, rssi: nil)
        a.advance(seconds: 1.5)
        func last() -> Int64 { SightingReport.parse(a.published.last!)!.report.wallMilliseconds }
        let first = last()
        // 1.3 s back: the next report, 1 s on, is 0.3 s before the last by the clock.
        a.wall -= 1300
        a.advance(seconds: 1)
        XCTAssertEqual(last(), first + 1)
        // 5 s back: the clock.
        a.wall -= 5000
        a.advance(seconds: 1)
        XCTAssertEqual(last(), a.wall - 500, "made at the report's time, half a second ago")
    }

    func testNobodyLeadingTheStrongestTakesThePersonAfterTenSeconds() {
        var a = door()
        tell(&a, rssi: nil)
        XCTAssertEqual(secondsToCheckIn(&a, neighbourRSSI: -63, within: 15), 11, "10 s of being the strongest (from the second sample's valid window)")
    }

    /// "The strongest" is the lead over the neighbours' latest sightings smoothed over 3 s
    /// (docs/neighbours.md, "The rule"): one neighbour's report 3 dB above this door (its
    /// noise) does not start the 10 s over; three in a row do. Against the strongest of the
    /// neighbours' last 3 s, the one report counted for 3 s and started them over.
    func testTheStrongestIsJudgedOnTheLeadSmoothedOverThreeSeconds() {
        func secondsToCheckIn(flip: Int8, for reports: Int) -> Int? {
            var a = door()
            tell(&a, rssi: nil)
            for second in 0 ..< 25 {
                tell(&a, rssi: (4 ..< 4 + reports).contains(second) ? flip : -63)
                a.stay(0, rssi: -60, seconds: 1)
                if a.state(0) == .present { return second }
            }
            return nil
        }
        XCTAssertEqual(secondsToCheckIn(flip: -63, for: 1), 11, "no flip: as in the test above")
        XCTAssertEqual(secondsToCheckIn(flip: -57, for: 1), 11, "one report 3 dB above, smoothed from +3: still the strongest")
        let restarted = secondsToCheckIn(flip: -57, for: 3)
        XCTAssertNotNil(restarted)
        XCTAssertGreaterThanOrEqual(restarted ?? 0, 6 + 10, "three reports 3 dB above: the 10 s start over")
    }

    /// The checkin as the strongest also waits for this door to lead the neighbour's latest
    /// sighting at that moment (docs/neighbours.md, "The rule"): a person walking out of
    /// this room to the next door's is still the strongest here on the lead smoothed over
    /// 3 s when the next door's report already hears them better.
    func testTheStrongestChecksInOnlyWhileLeadingTheLatestSighting() {
        func secondsToCheckIn(neighbourAtElevenSeconds rssi: Int8) -> Int? {
            var a = door()
            tell(&a, rssi: nil)
            for second in 0 ..< 25 {
                tell(&a, rssi: second == 11 ? rssi : -63)
                a.stay(0, rssi: -60, seconds: 1)
                if a.state(0) == .present { return second }
            }
            return nil
        }
        XCTAssertEqual(secondsToCheckIn(neighbourAtElevenSeconds: -63), 11)
        // At 11 s, when this door would take them, the neighbour hears the person 1 dB above
        // this door: smoothed from +3 the lead is still +1.7, but this door is not the
        // stronger at that moment.
        XCTAssertEqual(secondsToCheckIn(neighbourAtElevenSeconds: -59), 12, "taken at the next report, which has this door stronger again")
    }

    /// The 10 s as the strongest count above `enter_rssi` judged on this door's signal
    /// smoothed over 3 s (docs/neighbours.md, "The rule"): at a seat 3 dB above
    /// `enter_rssi` (-70 here), a median 2 dB below it for two seconds does not start the
    /// 10 s over; five seconds below it do. The checkin itself waits for a signal above it.
    func testTheStrongestCountsAboveEnterOnTheSignalSmoothedOverThreeSeconds() {
        func secondsToCheckIn(low: Range<Int>) -> Int? {
            var a = door()
            tell(&a, rssi: nil)
            for second in 0 ..< 30 {
                tell(&a, rssi: -71)
                a.stay(0, rssi: low.contains(second) ? -72 : -67, seconds: 1)
                if a.state(0) == .present { return second }
            }
            return nil
        }
        XCTAssertEqual(secondsToCheckIn(low: 0 ..< 0), 11, "no dip: as in the tests above")
        XCTAssertEqual(secondsToCheckIn(low: 4 ..< 6), 11, "two samples below (the median below for two seconds): the 10 s go on")
        let restarted = secondsToCheckIn(low: 4 ..< 9)
        XCTAssertNotNil(restarted)
        XCTAssertGreaterThanOrEqual(restarted ?? 0, 9 + 10, "five seconds below: the 10 s start over")
    }

    func testWithoutNeighboursHeardTheDoorDecidesAloneAfterTheStartsWait() {
        var a = door()
        a.hear(0, rssi: -60)
        a.advance(seconds: 0.5)
        a.hear(0, rssi: -60)
        XCTAssertEqual(a.state(0), .nearby, "waiting for the neighbours, up to 2 s")
        a.advance(seconds: 1.6)
        a.hear(0, rssi: -60)
        XCTAssertEqual(a.state(0), .present)
        XCTAssertEqual(a.store.events(.checkin).count, 1)
        XCTAssertFalse(a.published.isEmpty, "the door reports what it hears (heartbeats too)")
    }

    func testAPresentPersonHeardBetterByAHoldingNeighbourHasMoved() throws {
        var a = door()
        tell(&a, rssi: nil)
        a.stay(0, rssi: -60, seconds: 3)
        XCTAssertEqual(a.state(0), .present)
        // The neighbour leads by the margin (it is taking them over: handover_s there).
        let leadBegan = a.wall
        for _ in 0 ..< 3 {
            tell(&a, rssi: -58)
            a.stay(0, rssi: -70, seconds: 1)
        }
        XCTAssertEqual(a.state(0), .present, "a lead without the neighbour holding moves nobody")
        for _ in 0 ..< 3 where a.state(0) == .present {
            tell(&a, rssi: -58, holds: true)
            a.stay(0, rssi: -70, seconds: 1)
        }
        let checkout = try XCTUnwrap(a.store.events(.checkout).first)
        XCTAssertEqual(checkout.movedTo, "door-b")
        XCTAssertGreaterThanOrEqual(checkout.timestampMilliseconds, leadBegan)
        XCTAssertLessThanOrEqual(checkout.timestampMilliseconds, leadBegan + 1000, "stamped when the lead began (this door's median crossed after a second)")
        XCTAssertEqual(checkout.decidedAtMilliseconds - leadBegan, 3000, "at once when the neighbour says it holds them")
        XCTAssertTrue(checkout.jsonBody().contains(#""app": {"version": "test"}, "reason": "moved", "movedTo": "door-b"}"#), checkout.jsonBody())
        XCTAssertEqual(a.state(0), .nearby)
        let held = HeldEventsFile(databasePath: "/x", batch: DoorCommitBatch(events: a.store.events, records: []))
        XCTAssertEqual(try HeldEventsFile(decoding: held.encode()).batch.events.map(\.movedTo), [nil, "door-b"],
                       "a move survives a stop with the store refusing")
        a.stay(0, rssi: -70, seconds: 3)
        XCTAssertEqual(a.store.events(.checkin).count, 1, "not taken back while the neighbour holds them")
    }

    func testALeadWithoutTheNeighbourHoldingMovesNobody() {
        var a = door()
        tell(&a, rssi: nil)
        a.stay(0, rssi: -60, seconds: 3)
        for _ in 0 ..< 10 {
            tell(&a, rssi: -58, holds: false)
            a.stay(0, rssi: -70, seconds: 1)
        }
        XCTAssertEqual(a.state(0), .present)
        XCTAssertTrue(a.store.events(.checkout).isEmpty)
    }

    func testReplaysAndStrangersAreRefusedAndCounted() {
        var a = door()
        let report = SightingReport(sender: "door-b", wallMilliseconds: a.wall, sightings: []).encoded(keys: keys)
        a.perform(a.core.neighbourSighting(report, at: a.now))
        a.perform(a.core.neighbourSighting(report, at: a.now))
        let stranger = SightingReport(sender: "door-z", wallMilliseconds: a.wall, sightings: []).encoded(keys: keys)
        a.perform(a.core.neighbourSighting(stranger, at: a.now))
        a.advance(seconds: 4)
        a.perform(a.core.neighbourSighting(report, at: a.now))
        XCTAssertEqual(a.core.sightings.taken, 1)
        XCTAssertEqual(a.core.sightings.refused, [.replayed: 1, .notANeighbour: 1, .stale: 1])
        XCTAssertEqual(a.logged("sighting refused (the first of its kind; all are counted)").count, 3)
    }

    func testWithoutNeighboursNothingIsPublished() {
        var a = DoorHarness(DoorHarness.setup(persons: 1))
        a.stay(0, seconds: 5)
        XCTAssertTrue(a.published.isEmpty)
        XCTAssertEqual(a.core.neighbourSighting([1, 2, 3], at: a.now).count, 0)
        XCTAssertEqual(a.core.sightings, SightingCounters())
    }

    /// docs/neighbours.md, "Reload": a reload forgets what the neighbours said and the
    /// rule's clocks; one that changes the neighbours refuses the reports of a door no
    /// longer listed.
    func testAReloadThatChangesTheNeighboursForgetsTheirSightingsAndLeads() {
        var a = door()
        tell(&a, rssi: nil)
        for _ in 0 ..< 4 {
            tell(&a, rssi: -66)
            a.stay(0, rssi: -60, seconds: 1)
        }
        // 6 dB ahead of door B, not yet for 3 s confirmed: the lead's clock runs.
        XCTAssertEqual(a.state(0), .nearby)
        func rule(_ a: inout DoorHarness) -> (sighting: Bool, leading: Bool) {
            let now = a.core.presence.latest
            return (a.core.presence.neighbourhood!.table.strongest(person: 0, at: now) != nil,
                    a.core.presence.neighbourhood!.leadingSince[0] != Neighbourhood.never)
        }
        XCTAssertTrue(rule(&a) == (true, true))
        let same = DoorHarness.neighbourSetup(persons: 2, id: "door-a", neighbours: .doors(["door-b"]), settings: DoorHarness.settings)
        a.perform(a.core.reload(same, at: a.now))
        XCTAssertTrue(rule(&a) == (false, false), "forgotten: they come again within a second")
        tell(&a, rssi: -66)
        a.stay(0, rssi: -60, seconds: 1)
        XCTAssertTrue(rule(&a) == (true, true), "heard again, the lead's clock starts over")
        let otherMargin = DoorHarness.neighbourSetup(persons: 2, id: "door-a", neighbours: .doors(["door-b"]),
                                                     settings: DoorHarness.settings, marginDB: 8)
        a.perform(a.core.reload(otherMargin, at: a.now))
        XCTAssertTrue(rule(&a) == (false, false), "another margin: forgotten")
        tell(&a, rssi: -66)
        a.stay(0, rssi: -60, seconds: 1)
        XCTAssertTrue(rule(&a) == (true, false), "6 dB is no lead by 8")
        let otherDoor = DoorHarness.neighbourSetup(persons: 2, id: "door-a", neighbours: .doors(["door-c"]), settings: DoorHarness.settings)
        a.perform(a.core.reload(otherDoor, at: a.now))
        XCTAssertTrue(rule(&a) == (false, false), "another neighbour: door B's sightings forgotten")
        tell(&a, rssi: -55)
        XCTAssertEqual(a.core.sightings.refused[.notANeighbour], 1, "door B is no neighbour any more")
        // Door C, heard, does not hear the person: they are taken here.
        let heartbeat = SightingReport(sender: "door-c", wallMilliseconds: a.wall, sightings: [])
        a.perform(a.core.neighbourSighting(heartbeat.encoded(keys: keys), at: a.now))
        a.stay(0, rssi: -60, seconds: 1)
        XCTAssertEqual(a.state(0), .present)
    }
}
