import AttendanceEvents
import EventLoop
import XCTest
@testable import GatewayCore

/// Arrivals, leaves, reloads, restarts and clock steps through the door core, in virtual time.
final class DoorPresenceTests: XCTestCase {
    func testArrivalAndLeave() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.stay(0, seconds: 5)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertEqual(door.logged("checkin").count, 1)
        XCTAssertEqual(door.indications.filter { if case .committed = $0 { true } else { false } }.count, 1)
        // Silence: lost after 10 s, checked out 180 s later.
        door.advance(seconds: 200)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        let checkin = door.store.events[0], checkout = door.store.events[1]
        XCTAssertEqual(checkout.visitStartMilliseconds, checkin.visitStartMilliseconds)
        XCTAssertNotEqual(door.store.record("p0")?.state, .present)
        XCTAssertEqual(door.core.counters.checkins, 1)
        XCTAssertEqual(door.core.counters.checkouts, 1)
    }

    func testAReportOfAnUnknownDeviceDecidesNothing() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.hear(7, rssi: -40)
        door.hear(7, rssi: -40)
        XCTAssertTrue(door.store.events.isEmpty)
        XCTAssertEqual(door.core.counters.tagReports, 0)
    }

    func testAReloadThatRemovesAPersonDuringTheirVisitChecksThemOutWithTheirRecord() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.stay(1, seconds: 3)
        XCTAssertEqual(door.store.record("p1")?.state, .present)
        door.perform(door.core.reload(DoorHarness.setup(persons: 1), at: door.now))
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        XCTAssertEqual(door.store.events.last?.userId, "p1")
        XCTAssertEqual(door.store.events.last?.beacon.tag, "t1")
        XCTAssertNil(door.store.record("p1"), "the record went with the checkout")
        XCTAssertNil(door.state(1))
    }

    func testAReloadThatRenamesTheGatewayChecksOutARemovedPersonUnderTheGatewayOfTheirCheckin() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.stay(1, seconds: 3)
        var renamed = DoorHarness.setup(persons: 1)
        renamed.gateway = GatewayIdentity(id: "door-2")
        door.perform(door.core.reload(renamed, at: door.now))
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        let checkin = door.store.events[0], checkout = door.store.events[1]
        XCTAssertEqual(checkout.gateway, checkin.gateway, "decided under the configuration of the visit")
        XCTAssertEqual(checkout.idempotencyKey,
                       IdempotencyKey.make(personId: "p1", gatewayId: "door-1", type: .checkout,
                                           visitStartMilliseconds: checkin.visitStartMilliseconds))
    }

    func testAPersonRemovedWhileTheirCheckinWaitsGetsBothEventsInOrderAndTheirRecordGoes() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.store.refusing = DoorCommitTests.ioError
        door.stay(1, seconds: 3)
        door.perform(door.core.reload(DoorHarness.setup(persons: 1), at: door.now))
        XCTAssertEqual(door.core.uncommittedCount, 2)
        door.store.refusing = nil
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        XCTAssertEqual(door.store.events.map(\.userId), ["p1", "p1"])
        XCTAssertNil(door.store.record("p1"))
    }

    func testARestartRestoresAnOpenVisitAndChecksOutAPersonNoLongerConfigured() {
        var first = DoorHarness(DoorHarness.setup(persons: 2))
        first.stay(0, seconds: 3)
        first.stay(1, seconds: 3)
        first.perform(first.core.saveAll(personIds: ["p0", "p1"]))
        var store = first.store
        let stored = store.records
        store.refusing = nil
        // Restarted with p1 removed from the configuration.
        var second = DoorHarness(DoorHarness.setup(persons: 1), stored: stored, store: store)
        XCTAssertEqual(second.state(0), .present, "the open visit comes back open: no second checkin")
        XCTAssertEqual(second.logged("presence restored").count, 1)
        let checkout = second.store.events.last
        XCTAssertEqual(checkout?.type, .checkout)
        XCTAssertEqual(checkout?.userId, "p1")
        XCTAssertEqual(checkout?.visitStartMilliseconds, first.store.events[1].visitStartMilliseconds)
        XCTAssertNil(second.store.record("p1"))
        // p0 comes back within the leave debounce: same visit, no event.
        second.stay(0, seconds: 3)
        XCTAssertEqual(second.store.events(.checkin).count, 2)
        XCTAssertEqual(second.state(0), .present)
    }

    func testAStoreThatOpensLateChecksOutTheStoredVisitsAheadOfWhatWasDecidedMeanwhile() {
        var first = DoorHarness(DoorHarness.setup(persons: 3))
        for n in 0 ..< 3 { first.stay(n, seconds: 3) }
        first.perform(first.core.saveAll(personIds: ["p0", "p1", "p2"]))
        let stored = first.store.records
        let visitStarts = first.store.events.map(\.visitStartMilliseconds)
        // Restarted with p2 removed, and the store cannot be opened (a lock, a read-only
        // mount): the door runs on without it, nothing restored yet.
        var store = first.store
        store.refusing = DoorCommitTests.ioError
        var second = DoorHarness(DoorHarness.setup(persons: 2), store: store, restoring: false)
        second.advance(seconds: 30)  // (the second run's clock past the first's)
        second.stay(0, seconds: 3)  // p0 is back; the engine knows nothing of their open visit
        XCTAssertEqual(second.core.uncommittedCount, 1)
        // The store opens: what it holds is restored, then the waiting events go.
        second.store.refusing = nil
        second.perform(second.core.restore(stored: stored, at: second.now, clock: second.clock))
        second.perform(second.core.retryCommits(at: second.now))
        let decided = second.store.events.dropFirst(3)
        XCTAssertEqual(decided.map { "\($0.type.rawValue) \($0.userId)" }, ["checkout p2", "checkout p0", "checkin p0"],
                       "the stored visits end before anything of this run")
        XCTAssertEqual(decided.dropFirst().first?.visitStartMilliseconds, visitStarts[0], "p0's stored visit is checked out")
        XCTAssertEqual(second.state(0), .present, "what was decided meanwhile stands")
        XCTAssertEqual(second.store.record("p0")?.state, .present)
        XCTAssertNil(second.store.record("p2"))
        XCTAssertEqual(second.state(1), .present, "p1, not heard meanwhile, is restored as at a start")
        second.advance(seconds: 200)
        let p1Checkout = second.store.events.first { $0.type == .checkout && $0.userId == "p1" }
        XCTAssertEqual(p1Checkout?.visitStartMilliseconds, visitStarts[1], "p1's visit ends with its own checkout")
        XCTAssertEqual(second.store.events(.checkin).count, 4, "no second checkin for a restored visit")
    }

    func testARefusedCheckoutOfARemovedPersonIsKeptAndRetried() {
        var first = DoorHarness(DoorHarness.setup(persons: 2))
        first.stay(1, seconds: 3)
        first.perform(first.core.saveAll(personIds: ["p0", "p1"]))
        var store = first.store
        store.refusing = DoorCommitTests.full
        var second = DoorHarness(DoorHarness.setup(persons: 1), stored: store.records, store: store)
        XCTAssertEqual(second.core.uncommittedCount, 1)
        XCTAssertEqual(second.store.record("p1")?.state, .present, "the record stays until its checkout is stored")
        second.store.refusing = nil
        second.advance(seconds: 5)
        XCTAssertEqual(second.store.events.last?.type, .checkout)
        XCTAssertNil(second.store.record("p1"))
    }

    func testEventTimesFollowAStepOfTheWallClockAndAnOpenVisitKeepsItsStart() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.stay(0, seconds: 3)
        let start = door.store.events[0].visitStartMilliseconds
        door.wall += 3_600_000  // NTP's first sync steps the clock an hour ahead
        door.advance(seconds: 5)
        XCTAssertEqual(door.logged("wall clock stepped").count, 1)
        door.stay(1, seconds: 3)
        let second = door.store.events[1]
        XCTAssertEqual(second.timestampMilliseconds, door.wall - 2_000, accuracy: 1_500)
        door.advance(seconds: 300)
        let checkout = door.store.events.first { $0.type == .checkout && $0.userId == "p0" }
        XCTAssertEqual(checkout?.visitStartMilliseconds, start, "the checkout pairs with its checkin")
    }

    func testReportsReadLateAreStampedWhenTheyArrivedWithoutAClockStep() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.stay(0, seconds: 3)
        // Two reports that arrived 3 s before the read that took them (a slow CPU): the
        // clock, read at the read, must not be anchored at their arrival.
        let arrived = door.now
        let arrivedWall = door.wall
        door.advance(seconds: 3)
        let readAt = door.now
        let wallAtRead = door.wall
        door.perform(door.core.beginReports(at: arrived, clock: WallClockReading(wallMilliseconds: wallAtRead, synchronised: nil),
                                            clockReadAt: readAt))
        door.perform(door.core.endReports(at: arrived))
        XCTAssertEqual(door.logged("wall clock stepped").count, 0, "a late read is not a clock step")
        XCTAssertEqual(door.core.presence.wallClock.wallMilliseconds(at: arrived), arrivedWall)
    }

    func testACheckoutDecidedByATimerFollowsAWallClockStepBetweenHousekeepingTicks() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.stay(0, seconds: 3)
        // Last heard at 3 s: UNCONFIRMED at 13 s, the checkout at 193 s; housekeeping
        // runs at 191 s and 196 s, so the leave timer's tick is not one of them.
        door.advance(seconds: 192.5 - 4)
        door.wall += 3_600_000  // NTP's first sync steps the clock an hour ahead
        door.advance(seconds: 1)
        let checkout = door.store.events.first { $0.type == .checkout }
        XCTAssertNotNil(checkout)
        XCTAssertEqual(checkout?.decidedAtMilliseconds ?? 0, door.wall - 500, accuracy: 100,
                       "the tick that decides it reads the clock; it must not wait for the next housekeeping")
        XCTAssertEqual(door.logged("wall clock stepped").count, 1)
    }

    func testAnEventDecidedAtTheRestoreSaysTheClockIsUnsynchronisedWhenTheReadingSaysSo() {
        var first = DoorHarness(DoorHarness.setup(persons: 2))
        first.stay(1, seconds: 3)
        first.perform(first.core.saveAll(personIds: ["p0", "p1"]))
        // Restarted on a Pi without a real-time clock (not synchronised yet), p1 removed.
        let second = DoorHarness(DoorHarness.setup(persons: 1), stored: first.store.records, store: first.store,
                                 synchronised: false)
        let checkout = second.store.events.last
        XCTAssertEqual(checkout?.type, .checkout)
        XCTAssertEqual(checkout?.userId, "p1")
        XCTAssertEqual(checkout?.clockSynced, false, "the restore's reading says the clock is not synchronised")
        XCTAssertEqual(second.logged("system clock not synchronised; events carry clockSynced=false until it is").count, 1)
    }

    func testEventsDecidedOnAnUnsynchronisedClockSaySo() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.synchronised = false
        door.advance(seconds: 5)
        XCTAssertEqual(door.logged("system clock not synchronised; events carry clockSynced=false until it is").count, 1)
        door.stay(0, seconds: 3)
        XCTAssertEqual(door.store.events.first?.clockSynced, false)
    }

    func testAConnectionTrackedTagsLinkLossStartsTheLeave() {
        var door = DoorHarness(DoorHarness.setup(persons: 1, tracked: [0]))
        door.stay(0, seconds: 1)
        XCTAssertNotNil(door.wanted[0], "a tracked tag whose person is not OUTSIDE is wanted")
        door.perform(door.core.connected(tagIndex: 0, handle: 0x40, at: door.now))
        XCTAssertTrue(door.disconnected.isEmpty, "a tracked connection is kept")
        for _ in 0 ..< 3 {
            door.perform(door.core.connectionRSSI(tagIndex: 0, rssi: -55, at: door.now))
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.state(0), .present)
        door.perform(door.core.connectionLost(tagIndex: 0, reason: "remote user terminated", at: door.now))
        XCTAssertEqual(door.state(0), .unconfirmed, "at once")
        door.advance(seconds: 181)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
    }

    func testCheckpointsOnceAMinuteEverySecondOneDurable() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        for _ in 0 ..< 250 {
            door.hear(0, rssi: -90)
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.store.durability, [true, false, true, false, true], "the restore's, then one a minute, every 2nd durable")
        XCTAssertNotNil(door.store.records[LastHeardDigest.storageKey], "only heard: the digest carries it")
    }
}

/// What one report costs does not grow with the roster.
final class DoorWorkPerReportTests: XCTestCase {
    /// Timer firings in a minute while `present` persons, who arrived a second apart, are
    /// heard every second.
    private func wakeUpsWhileEveryoneIsHeard(present: Int) -> Int {
        var door = DoorHarness(DoorHarness.setup(persons: present))
        for arrived in 1 ... present {
            door.hear(Array(0 ..< arrived), rssi: -60)
            door.advance(seconds: 1)
        }
        for _ in 0 ..< 30 {  // everyone checked in, their timers spread over the seconds
            door.hear(Array(0 ..< present), rssi: -60)
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.store.events.count, present, "all checked in, nobody lost")
        let before = door.ticks
        for _ in 0 ..< 60 {
            door.hear(Array(0 ..< present), rssi: -60)
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.store.events.count, present)
        return door.ticks - before
    }

    func testPersonsHeardAllAlongDoNotWakeTheDoor() {
        let alone = wakeUpsWhileEveryoneIsHeard(present: 1)
        XCTAssertEqual(alone, 12, "the 5 s housekeeping alone")
        XCTAssertEqual(wakeUpsWhileEveryoneIsHeard(present: 40), alone, "no timer for persons whose deadline only moved later")
    }

    func testAReportRedecidesOnlyItsOwnTagsWish() {
        for persons in [10, 2_000] {
            var door = DoorHarness(DoorHarness.setup(persons: persons, requireProof: Set(0 ..< persons)))
            door.hear(5, rssi: -80)  // the first batch decides every tag once
            var visited = door.core.wishTagsVisited
            for _ in 0 ..< 10 {
                door.advance(seconds: 1.1)
                door.hear(5, rssi: -80)
            }
            XCTAssertEqual(door.core.wishTagsVisited - visited, 10, "one tag per report at \(persons) persons")
            // Heard again at the same address within a second: not re-decided at all.
            visited = door.core.wishTagsVisited
            for _ in 0 ..< 10 { door.hear(5, rssi: -80) }
            XCTAssertEqual(door.core.wishTagsVisited - visited, 0, "the same tag within the second at \(persons) persons")
        }
    }
}
