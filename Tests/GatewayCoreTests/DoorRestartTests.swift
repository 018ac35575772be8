import EventLoop
@testable import HCI
import XCTest
@testable import GatewayCore

/// Restarts that never split a visit (docs/presence.md, "Restart rules"): `kill -9` and
/// power cuts in the middle of visits, through what the store keeps of each, on a
/// virtual clock.
final class DoorRestartTests: XCTestCase {
    /// Person 0 heard every half second for `seconds`.
    private func present(_ door: inout DoorHarness, seconds: Int) {
        for _ in 0 ..< seconds * 2 {
            door.hear(0, rssi: -60)
            door.advance(seconds: 0.5)
        }
    }

    /// The same door started again after `downtime` (wall and monotonic clocks move on)
    /// with what the store kept; its controller scans `bringUp` seconds after start.
    private func restart(_ door: DoorHarness, stored: [String: [UInt8]], downtime: Double,
                         bringUp: Double = 1) -> DoorHarness {
        var store = door.store
        store.records = stored
        let now = door.now + .milliseconds(Int64(downtime * 1000))
        var next = DoorHarness(door.core.presence.settings == DoorHarness.settings ? DoorHarness.setup(persons: 1)
                                   : DoorHarness.setup(persons: 1, settings: door.core.presence.settings),
                               stored: stored, store: store, scanning: false, now: now,
                               wall: door.wall + Int64(downtime * 1000))
        next.advance(seconds: bringUp)
        next.perform(next.core.scanningStarted(at: next.now))
        return next
    }

    func testKill9TwiceMidVisitWithCompressedTimingsNeverSplitsTheVisit() throws {
        let settings = PresenceSettings(window: .seconds(2), lostAfter: .seconds(2), leaveAfter: .seconds(4),
                                        awayAfter: .seconds(5))
        XCTAssertEqual(DoorCore.checkpointInterval(leaveAfter: settings.leaveAfter), settings.leaveAfter / 3)
        var door = DoorHarness(DoorHarness.setup(persons: 1, settings: settings))
        present(&door, seconds: 20)
        for _ in 0 ..< 2 {
            // kill -9: the store keeps everything written, relaxed checkpoints too. What
            // it knows of "last heard" is at most a third of leave_after_s old.
            let lastHeard = try XCTUnwrap(door.core.presence.lastHeardWallMilliseconds(of: "p0"))
            let stored = door.store.records
            let digest = stored[LastHeardDigest.storageKey].flatMap(LastHeardDigest.init(decoding:))
            let storedLastHeard = max(digest?.lastHeard["p0"] ?? .min,
                                      door.store.record("p0")?.lastSampleWallMilliseconds ?? .min)
            XCTAssertLessThanOrEqual(lastHeard - storedLastHeard, 1334, "staleness within leave_after_s / 3")
            door = restart(door, stored: stored, downtime: 1.5)
            XCTAssertEqual(door.state(0), .present)
            present(&door, seconds: 20)
            XCTAssertEqual(door.store.events.map(\.type), [.checkin], "no checkout, no second checkin")
        }
        let lastWall = try XCTUnwrap(door.core.presence.lastHeardWallMilliseconds(of: "p0"))
        door.advance(seconds: 10)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        let checkin = door.store.events[0], checkout = door.store.events[1]
        XCTAssertEqual(checkout.visitStartMilliseconds, checkin.visitStartMilliseconds)
        // (The harness's wall clock drops sub-millisecond steps: a few milliseconds apart.)
        XCTAssertEqual(checkout.timestampMilliseconds, lastWall + 2000, accuracy: 5, "UNCONFIRMED at the last sample + lost_after_s")
    }

    func testKill9MidVisitThenGoneStampsTheCheckoutFromTheCheckpointedLastSample() throws {
        let settings = PresenceSettings(window: .seconds(2), lostAfter: .seconds(2), leaveAfter: .seconds(4),
                                        awayAfter: .seconds(5))
        var door = DoorHarness(DoorHarness.setup(persons: 1, settings: settings))
        present(&door, seconds: 20)
        let lastHeard = try XCTUnwrap(door.core.presence.lastHeardWallMilliseconds(of: "p0"))
        door = restart(door, stored: door.store.records, downtime: 5)
        door.advance(seconds: 1.999)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin], "the scan has had less than lost_after_s")
        door.advance(seconds: 0.001)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        let stamped = door.store.events[1].timestampMilliseconds
        XCTAssertLessThanOrEqual(stamped, lastHeard + 2000)
        XCTAssertGreaterThanOrEqual(stamped, lastHeard + 2000 - 1334, "at most a checkpoint interval early")
        XCTAssertEqual(door.logged("restored visits decided by the scan again").count, 1)
    }

    func testAPowerCutWithA90SecondOutageAtDefaultTimingsNeverSplitsTheVisit() throws {
        XCTAssertEqual(DoorCore.checkpointInterval(leaveAfter: .seconds(180)), .seconds(60), "the quiet door's SD writes")
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        present(&door, seconds: 115)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        // The power goes: only what waited for the disk is left (the relaxed checkpoint at
        // one minute is lost), so "last heard" is the checkin's, 115 s old, and the door is
        // dark for 90 s more (the Pi's boot included).
        let stored = door.store.durableRecords
        XCTAssertEqual(try XCTUnwrap(PersistedPresence(decoding: try XCTUnwrap(stored["p0"]))).lastSampleWallMilliseconds,
                       door.store.events[0].timestampMilliseconds)
        door = restart(door, stored: stored, downtime: 90, bringUp: 20)
        present(&door, seconds: 300)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin], "the person stayed: one visit")
        let lastWall = try XCTUnwrap(door.core.presence.lastHeardWallMilliseconds(of: "p0"))
        door.advance(seconds: 200)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout])
        XCTAssertEqual(door.store.events[1].timestampMilliseconds, lastWall + 10_000, accuracy: 5)
    }
}
