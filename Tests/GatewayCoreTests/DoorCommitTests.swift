import EventLoop
import XCTest
@testable import GatewayCore

/// The one committer (docs/reliability.md, "Events the store refuses"): order, the
/// record with its event, retries on the monotonic tick, the bound, shutdown.
final class DoorCommitTests: XCTestCase {
    static let ioError = DoorStoreFailure(message: "SQLite error 10: disk I/O error", outboxFull: false)
    static let full = DoorStoreFailure(message: "the outbox is full", outboxFull: true)

    func testACheckinIsCommittedWithThePresentRecordInOneBatch() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.stay(0, seconds: 2)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertEqual(door.store.record("p0")?.state, .present, "the record went with its event")
        XCTAssertEqual(door.store.events.first?.sequence, 1)
    }

    func testTheEventsOfOneBatchOfReportsGoToTheStoreInOneTransaction() {
        var door = DoorHarness(DoorHarness.setup(persons: 3))
        for _ in 0 ..< 2 {
            door.hear([0, 1, 2], rssi: -60)
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.store.events.map(\.userId), ["p0", "p1", "p2"], "in decision order")
        XCTAssertEqual(door.store.events.map(\.sequence), [1, 2, 3])
        XCTAssertEqual(door.store.commitAttempts, 1, "one transaction (one wait for the disk) for the batch")
        XCTAssertEqual((0 ..< 3).map { door.store.record("p\($0)")?.state }, [.present, .present, .present])
    }

    func testAPersonHeardAgainAfterTheirEventGoesInTheNextLastHeardDigest() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.hear(1, rssi: -90)  // only heard all along
        door.stay(0, seconds: 2)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertFalse(door.core.checkpoints.heardPersons.contains("p0"), "the checkin saved p0's record")
        door.hear([0, 1], rssi: -60)
        XCTAssertEqual(door.core.checkpoints.heardPersons, ["p0", "p1"], "heard since their record was saved: in the next digest")
    }

    func testANewerEventNeverOvertakesAnOlderRefusedOne() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.store.refusing = Self.ioError
        door.stay(0, seconds: 2)
        XCTAssertEqual(door.core.uncommittedCount, 1)
        XCTAssertEqual(door.logged("cannot store event, will retry").count, 1)
        // The disk recovers before the retry is due; p1 arrives now.
        door.store.refusing = nil
        door.stay(1, seconds: 2)
        XCTAssertTrue(door.store.events.isEmpty, "p1's checkin waits behind p0's until the retry")
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.map(\.userId), ["p0", "p1"], "in decision order")
        XCTAssertEqual(door.store.events.map(\.sequence), [1, 2])
        XCTAssertEqual(door.core.uncommittedCount, 0)
    }

    func testIfTheHeadFailsNothingBehindItIsCommitted() {
        var door = DoorHarness(DoorHarness.setup(persons: 3))
        door.store.refusing = Self.ioError
        for n in 0 ..< 3 { door.stay(n, seconds: 2) }
        let attempts = door.store.commitAttempts
        XCTAssertEqual(door.core.uncommittedCount, 3)
        door.advance(seconds: 20)
        XCTAssertGreaterThan(door.store.commitAttempts, attempts, "retried every 5 s")
        XCTAssertLessThanOrEqual(door.store.commitAttempts - attempts, 5, "not more often than every 5 s")
        XCTAssertTrue(door.store.events.isEmpty)
        door.store.refusing = nil
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.map(\.userId), ["p0", "p1", "p2"])
    }

    func testAPersonWhoseCheckinWaitsIsNotCheckpointedAsPresent() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.store.refusing = DoorCommitTests.full  // checkpoints still work: only events are refused
        for _ in 0 ..< 130 {  // two checkpoints, one of them durable
            door.hear(0, rssi: -60)
            door.hear(1, rssi: -90)
            door.advance(seconds: 1)
        }
        XCTAssertEqual(door.store.record("p1")?.state, .nearby, "the checkpoints ran")
        XCTAssertEqual(door.state(0), .present)
        XCTAssertNotEqual(door.store.record("p0")?.state, .present,
                          "a restart must not find a visit open whose checkin was never stored")
        door.store.refusing = nil
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertEqual(door.store.record("p0")?.state, .present)
    }

    func testAtTheBoundCheckinsAreHeldAndCheckoutsStillQueue() {
        let count = DoorCommitQueue.maximumHeld + 2
        var door = DoorHarness(DoorHarness.setup(persons: count))
        door.store.refusing = Self.full
        for n in 0 ..< DoorCommitQueue.maximumHeld {
            door.hear(n, rssi: -60)
            door.hear(n, rssi: -60)
        }
        XCTAssertEqual(door.core.uncommittedCount, DoorCommitQueue.maximumHeld)
        XCTAssertEqual(door.logged("check-ins held: too many events wait for the store").count, 1)
        // One more arrives: held, not decided.
        door.stay(count - 1, seconds: 3)
        XCTAssertEqual(door.state(count - 1), .nearby)
        XCTAssertEqual(door.core.uncommittedCount, DoorCommitQueue.maximumHeld)
        XCTAssertEqual(door.logged("check-ins held: too many events wait for the store").count, 1, "logged once")
        // Everyone else leaves: their checkouts queue beyond the bound.
        door.stay(count - 1, seconds: 200)
        XCTAssertEqual(door.core.uncommittedCount, 2 * DoorCommitQueue.maximumHeld)
        XCTAssertTrue(door.store.events.isEmpty)
        // The server takes the backlog: everything in order, then the held person checks in.
        door.store.refusing = nil
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.count, 2 * DoorCommitQueue.maximumHeld)
        XCTAssertEqual(door.store.events.first?.type, .checkin)
        XCTAssertEqual(door.store.events.last?.type, .checkout)
        XCTAssertEqual(door.logged("check-ins no longer held: the store took the waiting events").count, 1)
        door.stay(count - 1, seconds: 2)
        XCTAssertEqual(door.store.events.last?.userId, "p\(count - 1)")
        XCTAssertEqual(door.store.events.last?.type, .checkin)
    }

    func testAtShutdownOneLastAttemptAndWhatRemainsIsHeldForTheRestart() throws {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.stay(1, seconds: 2)
        door.store.refusing = Self.ioError
        door.stay(0, seconds: 2)
        let attempts = door.store.commitAttempts
        door.perform(door.core.shutdown(at: door.now))
        XCTAssertEqual(door.store.commitAttempts, attempts + 1, "one last attempt")
        let held = try XCTUnwrap(door.core.heldAtShutdown(personIds: ["p0", "p1"]))
        XCTAssertEqual(held.events.map(\.userId), ["p0"])
        XCTAssertEqual(held.events.map(\.type), [.checkin])
        XCTAssertEqual(held.records.map(\.key), ["p0", "p1"], "the waiting person's record, then everyone else's")
        door.store.refusing = DoorStoreFailure(message: "full", outboxFull: true)  // records can still be saved
        door.perform(door.core.saveAll(personIds: ["p0", "p1"]))
        XCTAssertNil(door.store.record("p0"), "p0's state is not saved without its checkin")
        XCTAssertEqual(door.store.record("p1")?.state, .present)
    }

    func testHeldEventsKeptForTheRestartAreCountedInOneWarning() throws {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.store.refusing = Self.ioError
        door.stay(0, seconds: 2)
        let held = try XCTUnwrap(door.core.heldAtShutdown(personIds: ["p0"]))
        door.perform(DoorCore.shutdownLines(held: held, keptIn: "/run/beacon-gateway/held-events", failure: nil))
        let line = door.logged("events not stored at shutdown: kept for the restart")
        XCTAssertEqual(line.count, 1)
        XCTAssertEqual(line.first?.level, .warning)
        let fields = line.first.map { Dictionary(uniqueKeysWithValues: Array($0.fields)) }
        XCTAssertEqual(fields?["count"], "1")
        XCTAssertEqual(fields?["file"], "/run/beacon-gateway/held-events")
        XCTAssertTrue(door.logged("event not stored").isEmpty)
    }

    func testHeldEventsThatCannotBeKeptAreLoggedEachWithItsKey() throws {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.store.refusing = Self.ioError
        door.stay(0, seconds: 2)
        door.stay(1, seconds: 2)
        let held = try XCTUnwrap(door.core.heldAtShutdown(personIds: ["p0", "p1"]))
        door.perform(DoorCore.shutdownLines(held: held, keptIn: nil, failure: "cannot create /run/x: Read-only file system"))
        let summary = door.logged("events not stored at shutdown: their persons are decided again after the restart")
        XCTAssertEqual(summary.count, 1)
        XCTAssertEqual(summary.first?.level, .error)
        let fields = summary.first.map { Dictionary(uniqueKeysWithValues: Array($0.fields)) }
        XCTAssertEqual(fields?["count"], "2")
        XCTAssertEqual(fields?["not_kept"], "cannot create /run/x: Read-only file system")
        let each = door.logged("event not stored")
        XCTAssertEqual(each.map(\.level), [.error, .error])
        XCTAssertEqual(each.map { Dictionary(uniqueKeysWithValues: Array($0.fields))["idempotency_key"] },
                       held.events.map(\.idempotencyKey), "every key, in decision order")
    }

    func testTheLastAttemptAtShutdownCanStillStoreEverything() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.store.refusing = Self.ioError
        door.stay(0, seconds: 2)
        door.store.refusing = nil
        door.perform(door.core.shutdown(at: door.now))
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertNil(door.core.heldAtShutdown(personIds: ["p0"]), "nothing held")
    }

    /// An hour of a refusing disk: the failure once, a summary every ten minutes, the
    /// recovery once; not a line per 5 s retry (docs/logs-and-systemd.md).
    func testAnHourOfRefusedCommitsWritesAFewLinesNotOnePerRetry() throws {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.store.refusing = Self.ioError
        door.stay(0, seconds: 2)
        door.advance(seconds: 3610)
        let lines = door.logged("cannot store event, will retry")
        XCTAssertGreaterThan(door.store.commitAttempts, 700, "retried every 5 s")
        XCTAssertEqual(lines.count, 1 + 6, "the first failure and one summary per ten minutes")
        let summary = try XCTUnwrap(lines.last)
        XCTAssertEqual(summary.fields.first { $0.key == "failures" }?.value, "120")
        door.store.refusing = nil
        door.advance(seconds: 5)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout], "the person left meanwhile")
        XCTAssertEqual(door.logged("events stored again").count, 1)
        XCTAssertEqual(door.logged("events stored again").first?.fields.first { $0.key == "failures" }?.value,
                       "\(door.store.commitAttempts - 1)")
    }

    func testAnHourOfRefusedCheckpointsAtCompressedTimingsWritesAFewLines() {
        let settings = PresenceSettings(window: .seconds(2), lostAfter: .seconds(2), leaveAfter: .seconds(4),
                                        awayAfter: .seconds(5))
        var door = DoorHarness(DoorHarness.setup(persons: 1, settings: settings))
        door.store.refusing = Self.ioError
        for _ in 0 ..< 3610 { door.hear(0, rssi: -90); door.advance(seconds: 1) }
        XCTAssertEqual(door.logged("cannot save presence state").count, 1 + 6)
        door.store.refusing = nil
        door.advance(seconds: 2)
        XCTAssertEqual(door.logged("presence state saved again").count, 1)
    }
}
