import AttendanceEvents
import BluetoothCrypto
import EventLoop
@testable import HCI
import SplitMix
import XCTest
@testable import GatewayCore

/// Decisions the store refused, kept over a stop and stored at the next start
/// (docs/reliability.md, "Held over a restart"), on a virtual clock: the file's bytes,
/// the restart through them, and files that are damaged or built to hurt.
final class HeldEventsTests: XCTestCase {
    static let readOnly = DoorStoreFailure(message: "SQLite error 8: attempt to write a readonly database", outboxFull: false,
                                           isDiskTrouble: true)
    static let database = "/var/lib/beacon-gateway/gateway.sqlite"

    /// p0 checked in while the disk refuses; the door stops (its last attempt refused too).
    private func stoppedWithACheckinHeld() throws -> (door: DoorHarness, held: DoorCommitBatch) {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.stay(1, seconds: 2)
        door.store.refusing = Self.readOnly
        door.stay(0, seconds: 2)
        door.perform(door.core.shutdown(at: door.now))
        XCTAssertEqual(door.store.events.map(\.userId), ["p1"], "p0's checkin is not stored")
        let held = try XCTUnwrap(door.core.heldAtShutdown(personIds: ["p0", "p1"]))
        return (door, held)
    }

    /// The door started again `downtime` later on `stored`.
    private func restarted(_ door: DoorHarness, stored: [String: [UInt8]], store: FakeDoorStore,
                           downtime: Double = 5) -> DoorHarness {
        DoorHarness(DoorHarness.setup(persons: 2), stored: stored, store: store,
                    now: door.now + .milliseconds(Int64(downtime * 1000)), wall: door.wall + Int64(downtime * 1000))
    }

    func testTheFileCarriesEveryFieldOfTheEventsAndTheRecords() throws {
        let (_, held) = try stoppedWithACheckinHeld()
        var spoof = AttendanceEvent.spoofSuspected(
            personId: "p1", tagId: "t1", address: DoorHarness.address(1),
            identities: [.iBeacon(uuid: Array(repeating: 0xAB, count: 16), major: 7, minor: 65535)],
            lockoutStartMilliseconds: 1_789_000_000_000, decidedAtMilliseconds: 1_789_000_000_500,
            lastRoundTripMilliseconds: 812, rssiSeries: [-61, -70], txPower: -59,
            gateway: GatewayIdentity(id: "door-1", site: "site-ü", door: nil), sequence: 0, appVersion: "1.2.3")
        spoof.clockSynced = false
        let batch = DoorCommitBatch(events: held.events + [spoof], records: held.records + [.delete(key: "gone")])
        let file = HeldEventsFile(databasePath: Self.database, batch: batch)
        let decoded = try HeldEventsFile(decoding: file.encode())
        XCTAssertEqual(decoded, file)
        XCTAssertEqual(decoded.batch.events.map { $0.jsonBody() }, batch.events.map { $0.jsonBody() },
                       "the same bodies: id, key, timestamps and all")
    }

    func testHeldEventsStoredAtTheRestartKeepTheirKeyAndTimeAndTheVisitIsNotDecidedAgain() throws {
        let (door, held) = try stoppedWithACheckinHeld()
        let file = try HeldEventsFile(decoding: HeldEventsFile(databasePath: Self.database, batch: held).encode())
        // The disk is back at the restart: the file is stored before anything is decided,
        // then presence is restored from the store.
        var store = door.store
        store.refusing = nil
        XCTAssertEqual(store.commit(file.batch), .committed(sequences: [2]))
        var next = restarted(door, stored: store.records, store: store)
        XCTAssertEqual(next.state(0), .present, "the visit the held checkin opened")
        for _ in 0 ..< 20 {
            next.hear([0, 1], rssi: -60)
            next.advance(seconds: 0.5)
        }
        XCTAssertEqual(next.store.events(.checkin).map(\.userId), ["p1", "p0"], "no second checkin")
        let stored = next.store.events[1]
        XCTAssertEqual(stored.idempotencyKey, held.events[0].idempotencyKey)
        XCTAssertEqual(stored.id, held.events[0].id)
        XCTAssertEqual(stored.timestampMilliseconds, held.events[0].timestampMilliseconds)
        next.advance(seconds: 600)
        let checkouts = next.store.events(.checkout)
        XCTAssertEqual(checkouts.map(\.userId).sorted(), ["p0", "p1"])
        XCTAssertEqual(checkouts.first { $0.userId == "p0" }?.visitStartMilliseconds, stored.visitStartMilliseconds,
                       "the held checkin's visit is the one checked out")
    }

    func testWhileTheDiskStillRefusesPresenceIsRestoredAsTheHeldEventsLeftIt() throws {
        let (door, held) = try stoppedWithACheckinHeld()
        let file = HeldEventsFile(databasePath: Self.database, batch: held)
        XCTAssertNil(door.store.record("p0"), "the store never had p0's visit")
        var next = restarted(door, stored: file.laidOver(door.store.records), store: door.store)
        XCTAssertEqual(next.state(0), .present)
        for _ in 0 ..< 20 {
            next.hear(0, rssi: -60)
            next.advance(seconds: 0.5)
        }
        XCTAssertTrue(next.core.heldAtShutdown(personIds: ["p0", "p1"]) == nil, "nothing new decided for p0")
        // The disk comes back: the held file first, then what this run decided.
        next.store.refusing = nil
        XCTAssertEqual(next.store.commit(file.batch), .committed(sequences: [2]))
        next.advance(seconds: 600)
        XCTAssertEqual(next.store.events.map(\.type), [.checkin, .checkin, .checkout, .checkout])
        XCTAssertEqual(next.store.events.filter { $0.userId == "p0" }.map(\.visitStartMilliseconds),
                       [held.events[0].visitStartMilliseconds, held.events[0].visitStartMilliseconds])
    }

    func testAFileKeptTwiceKeepsTheOlderEventsFirstAndTheNewerRecords() {
        let older = DoorCommitBatch(events: [], records: [.save(key: "p0", record: [1]), .save(key: "p1", record: [1])])
        let newer = DoorCommitBatch(events: [], records: [.delete(key: "p0"), .save(key: "p2", record: [2])])
        XCTAssertEqual(older.followed(by: newer).records,
                       [.save(key: "p1", record: [1]), .delete(key: "p0"), .save(key: "p2", record: [2])])
    }

    func testAReplayedFileStoresNothingTwice() throws {
        let (door, held) = try stoppedWithACheckinHeld()
        var store = door.store
        store.refusing = nil
        XCTAssertEqual(store.commit(held), .committed(sequences: [2]))
        XCTAssertEqual(store.commit(held), .committed(sequences: [nil]), "a replay cut short before the file went")
    }

    // MARK: Damaged and hostile files

    private func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try HeldEventsFile(decoding: bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    func testDamagedFilesAreRefusedWithTheReason() throws {
        let (_, held) = try stoppedWithACheckinHeld()
        let good = HeldEventsFile(databasePath: Self.database, batch: held).encode()
        XCTAssertNil(refusal(good))
        XCTAssertEqual(refusal(Array(good.dropLast(1))), "its digest does not match its content (damaged or cut short)")
        var flipped = good
        flipped[40] ^= 0x01
        XCTAssertEqual(refusal(flipped), "its digest does not match its content (damaged or cut short)")
        XCTAssertEqual(refusal(Array("hello".utf8)), "not a held-events file")
        XCTAssertEqual(refusal([]), "not a held-events file")
        var version = good
        version[4] = 9
        XCTAssertEqual(refusal(version), "held-events file version 9, expected 1 or 2")
        XCTAssertEqual(refusal([UInt8](repeating: 0, count: HeldEventsFile.maximumBytes + 1)),
                       "\(HeldEventsFile.maximumBytes + 1) bytes, more than the \(HeldEventsFile.maximumBytes) a held-events file may have")
    }

    /// Built to hurt, with a valid digest: counts far beyond the file, a key that is not the
    /// one its event's fields make.
    func testHostileFilesWithAValidDigestAreRefused() throws {
        let (_, held) = try stoppedWithACheckinHeld()
        var forged = held
        forged.events[0].idempotencyKey = "someone-else"
        XCTAssertEqual(refusal(HeldEventsFile(databasePath: Self.database, batch: forged).encode()),
                       "event 0's idempotency key does not match its fields")
        // Magic, version, an empty path, then an event count of 2^32 - 1.
        var body = Array("BGHE".utf8) + [1, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]
        body += SHA256.hash(body)
        XCTAssertEqual(refusal(body), "events: 4294967295, more than the file holds")
    }

    /// Random damage of every kind never traps: each file is read whole or refused.
    func testMutatedFilesNeverTrap() throws {
        let (_, held) = try stoppedWithACheckinHeld()
        let good = HeldEventsFile(databasePath: Self.database, batch: held).encode()
        var random = SplitMix64(seed: 25)
        var refused = 0
        for _ in 0 ..< 3000 {
            var bytes = good
            for _ in 0 ..< 1 + Int(random.next() % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
            if random.next() % 4 == 0 { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count)))) }
            // Half of them with their digest made valid again, to reach the parser.
            if random.next() % 2 == 0, bytes.count > SHA256.byteCount {
                let body = Array(bytes.dropLast(SHA256.byteCount))
                bytes = body + SHA256.hash(body)
            }
            if refusal(bytes) != nil { refused += 1 }
        }
        XCTAssertGreaterThan(refused, 2000)
    }
}
