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

    func testANeighbourHearingThePersonAsWellHoldsTheCheckinBack() {
        var a = door()
        tell(&a, rssi: nil)  // heard: the start's wait is over
        for _ in 0 ..< 5 {
            tell(&a, rssi: -62)
            a.stay(0, rssi: -60, seconds: 1)
        }
        XCTAssertEqual(a.state(0), .nearby, "2 dB ahead is not 6")
        tell(&a, rssi: -66)
        a.stay(0, rssi: -60, seconds: 1)
        XCTAssertEqual(a.state(0), .present, "6 dB ahead")
        XCTAssertEqual(a.store.events(.checkin).count, 1)
    }

    func testNobodyLeadingTheStrongestTakesThePersonAfterTenSeconds() {
        var a = door()
        tell(&a, rssi: nil)
        var checkedInAfter: Int?
        for second in 0 ..< 15 where checkedInAfter == nil {
            tell(&a, rssi: -63)
            a.stay(0, rssi: -60, seconds: 1)
            if a.state(0) == .present { checkedInAfter = second }
        }
        XCTAssertEqual(checkedInAfter, 11, "10 s of being the strongest (from the second sample's valid window)")
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

    func testAPresentPersonLedByAHoldingNeighbourForHandoverHasMoved() throws {
        var a = door()
        tell(&a, rssi: nil)
        a.stay(0, rssi: -60, seconds: 3)
        XCTAssertEqual(a.state(0), .present)
        let leadBegan = a.wall
        for _ in 0 ..< 8 where a.state(0) == .present {
            tell(&a, rssi: -58, holds: true)
            a.stay(0, rssi: -70, seconds: 1)
        }
        let checkout = try XCTUnwrap(a.store.events(.checkout).first)
        XCTAssertEqual(checkout.movedTo, "door-b")
        XCTAssertGreaterThanOrEqual(checkout.timestampMilliseconds, leadBegan)
        XCTAssertLessThan(checkout.timestampMilliseconds, leadBegan + 2000, "stamped when the lead began")
        XCTAssertGreaterThanOrEqual(checkout.decidedAtMilliseconds - checkout.timestampMilliseconds, 5000, "after handover_s")
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
}
