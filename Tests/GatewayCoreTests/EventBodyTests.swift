import Advertisements
@testable import AttendanceEvents
import EventLoop
import HCI
import XCTest
@testable import GatewayCore
import AdvertisingFixtures
import SplitMix

/// The event body of docs/event-api.md: key, timestamps, id and the exact JSON text.
final class EventBodyTests: XCTestCase {
    func testIdempotencyKeyMatchesTheSpecExample() {
        XCTAssertEqual(IdempotencyKey.make(personId: "u_1001", gatewayId: "door-lab-301", type: .checkin,
                                           visitStartMilliseconds: 1_789_012_345_678),
                       "39c4a6ba3fb70d9bc22431a88a6fce66ab54987301cacbeaf121e556553d5805")
    }

    func testCheckinAndCheckoutKeysDifferByTypeOnly() {
        let checkin = IdempotencyKey.make(personId: "u_1001", gatewayId: "g", type: .checkin, visitStartMilliseconds: 5)
        let checkout = IdempotencyKey.make(personId: "u_1001", gatewayId: "g", type: .checkout, visitStartMilliseconds: 5)
        let again = IdempotencyKey.make(personId: "u_1001", gatewayId: "g", type: .checkout, visitStartMilliseconds: 5)
        XCTAssertNotEqual(checkin, checkout)
        XCTAssertEqual(checkout, again, "no randomness in the key")
        XCTAssertEqual(checkin.count, 64)
        XCTAssertTrue(checkin.utf8.allSatisfy { (0x30 ... 0x39).contains($0) || (0x61 ... 0x66).contains($0) })
    }

    func testISO8601KnownInstants() {
        let cases: [(Int64, String)] = [
            (0, "1970-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (1_795_156_512_345, "2026-11-20T06:35:12.345Z"),
            (951_868_799_999, "2000-02-29T23:59:59.999Z"),
            (-2_203_891_200_000, "1900-03-01T00:00:00.000Z"),
            (4_107_499_200_000, "2100-02-28T12:00:00.000Z"),
            (1_789_012_345_678, "2026-09-10T03:52:25.678Z"),
        ]
        for (ms, text) in cases {
            XCTAssertEqual(ISO8601Timestamp.format(millisecondsSinceEpoch: ms), text, "\(ms)")
        }
        // Extremes format without trapping.
        XCTAssertFalse(ISO8601Timestamp.format(millisecondsSinceEpoch: .max).isEmpty)
        XCTAssertFalse(ISO8601Timestamp.format(millisecondsSinceEpoch: .min).isEmpty)
    }

    /// Day by day from 1601 to 2400 against a calendar counted the slow way, so every
    /// leap-year rule (4, 100, 400) is crossed several times.
    func testCivilFromDaysAgainstACountedCalendar() {
        func isLeap(_ y: Int64) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }
        func length(_ y: Int64, _ m: Int64) -> Int64 {
            [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][Int(m - 1)]
        }
        // Count back from the epoch to 1601-01-01.
        var days: Int64 = 0
        for year in Int64(1601) ..< 1970 { days -= isLeap(year) ? 366 : 365 }
        var (y, m, d): (Int64, Int64, Int64) = (1601, 1, 1)
        while y < 2401 {
            let civil = ISO8601Timestamp.civil(fromDays: days)
            if civil != (y, m, d) {
                XCTFail("day \(days): \(civil) instead of \(y)-\(m)-\(d)")
                return
            }
            days += 1
            d += 1
            if d > length(y, m) {
                d = 1
                m += 1
                if m > 12 { m = 1; y += 1 }
            }
        }
    }

    func testUUIDv4SetsVersionAndVariant() throws {
        let id = try XCTUnwrap(EventIdentifier.uuidV4(randomBytes: Array(repeating: 0xFF, count: 16)))
        XCTAssertEqual(id, "ffffffff-ffff-4fff-bfff-ffffffffffff")
        XCTAssertEqual(EventIdentifier.uuidV4(randomBytes: Array(repeating: 0, count: 16)), "00000000-0000-4000-8000-000000000000")
        XCTAssertNil(EventIdentifier.uuidV4(randomBytes: [1, 2, 3]))
        var rng = SplitMix64(seed: 7)
        var seen = Set<String>()
        for _ in 0 ..< 1000 {
            let uuid = EventIdentifier.uuidV4(using: &rng)
            XCTAssertEqual(uuid.count, 36)
            XCTAssertEqual(Array(uuid)[14], "4")
            XCTAssertTrue("89ab".contains(Array(uuid)[19]))
            seen.insert(uuid)
        }
        XCTAssertEqual(seen.count, 1000)
    }

    static let sampleEvent = AttendanceEvent(
        id: "0f8fad5b-d9cb-469f-a165-70867728950e", sequence: 42, type: .checkin, userId: "u_1001",
        gateway: GatewayIdentity(id: "door-lab-301", site: "S_HQ", door: "lab-301"),
        timestampMilliseconds: 1_795_156_512_345, decidedAtMilliseconds: 1_795_156_692_345,
        visitStartMilliseconds: 1_795_156_512_345,
        beacon: BeaconInfo(tag: "tag-1001", address: BluetoothAddress("C0:11:22:33:44:55")!,
                           identities: [.address(BluetoothAddress("C0:11:22:33:44:55")!),
                                        .iBeacon(uuid: TagIdentity.parseUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")!,
                                                 major: 10, minor: 3)]),
        rssiSeries: [-75, -71, -68, -66], txPower: -59,
        handshake: .init(ok: true, roundTripMilliseconds: 180), appVersion: "1.0.0"
    )

    func testJSONBodyExactText() {
        let expected = #"{"id": "0f8fad5b-d9cb-469f-a165-70867728950e", "# +
            #""idempotencyKey": "3f77ee788f784488840d3ea80bf70b19b209189bbef57ca504c74eddfb33f8f5", "# +
            #""sequence": 42, "type": "checkin", "userId": "u_1001", "deviceId": "door-lab-301", "# +
            #""siteId": "S_HQ", "doorId": "lab-301", "timestamp": "2026-11-20T06:35:12.345Z", "# +
            #""decidedAt": "2026-11-20T06:38:12.345Z", "visitStart": "2026-11-20T06:35:12.345Z", "# +
            #""beacon": {"tag": "tag-1001", "address": "C0:11:22:33:44:55", "# +
            #""uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 10, "minor": 3}, "# +
            #""rssiSeries": [-75, -71, -68, -66], "txPower": -59, "handshake": {"ok": true, "rt": 180}, "# +
            #""app": {"version": "1.0.0"}}"#
        XCTAssertEqual(Self.sampleEvent.jsonBody(), expected)
    }

    /// Decided on an unsynchronised clock: one field added at the end, nothing else moved.
    func testUnsynchronisedClockAddsClockSyncedFalse() {
        var event = Self.sampleEvent
        let synced = event.jsonBody()
        XCTAssertFalse(synced.contains("clockSynced"), "absent while the clock is synchronised")
        event.clockSynced = false
        XCTAssertEqual(event.jsonBody(), String(synced.dropLast()) + #", "clockSynced": false}"#)
    }

    /// Logged once per change: the first reading only when unsynchronised, then transitions.
    func testClockSyncStateReportsChangesOnly() {
        var state = ClockSyncState()
        XCTAssertTrue(state.isSynchronised)
        XCTAssertEqual(state.observe(synchronised: false), .unsynchronised)
        XCTAssertFalse(state.isSynchronised)
        XCTAssertNil(state.observe(synchronised: false))
        XCTAssertEqual(state.observe(synchronised: true), .synchronised)
        XCTAssertNil(state.observe(synchronised: true))
        XCTAssertEqual(state.observe(synchronised: false), .unsynchronised)
        var startsSynced = ClockSyncState()
        XCTAssertNil(startsSynced.observe(synchronised: true), "nothing to say at start when synchronised")
    }

    func testJSONBodyNullsAndEddystone() {
        var event = Self.sampleEvent
        event.gateway = GatewayIdentity(id: "g\"1")
        event.beacon = BeaconInfo(tag: "t", address: BluetoothAddress(rawValue: 0x010203040506),
                                  identities: [.eddystoneUID(namespace: bytes("edd1ebeac04e5defa017"), instance: bytes("0123456789ab"))])
        event.rssiSeries = []
        event.txPower = nil
        event.handshake = nil
        let body = event.jsonBody()
        XCTAssertTrue(body.contains(#""deviceId": "g\"1", "siteId": null, "doorId": null"#), body)
        XCTAssertTrue(body.contains(#""beacon": {"tag": "t", "address": "01:02:03:04:05:06", "namespace": "edd1ebeac04e5defa017", "instance": "0123456789ab"}"#), body)
        XCTAssertTrue(body.contains(#""rssiSeries": [], "txPower": null, "handshake": null, "app""#), body)
        // Address-only tags have a beacon block of tag and address only.
        event.beacon = BeaconInfo(tag: "t", address: BluetoothAddress(rawValue: 1), identities: [.address(BluetoothAddress(rawValue: 1))])
        XCTAssertTrue(event.jsonBody().contains(#""beacon": {"tag": "t", "address": "00:00:00:00:00:01"}"#))
    }

    /// From an engine decision to the body: wall times through the mapping, the key from
    /// the visit start, the checkout's key differing from the checkin's by type only.
    func testEventsFromDecisions() throws {
        var h = PresenceHarness()
        h.samples(-60, from: 0, to: 5)
        h.advance(to: 300)
        let gateway = GatewayIdentity(id: "door-lab-301", site: "S_HQ", door: "lab-301")
        let identities: [TagIdentity] = [.iBeacon(uuid: Array(repeating: 0xAB, count: 16), major: 1, minor: 2)]
        let events = h.events.enumerated().compactMap { index, event in
            AttendanceEvent(event, gateway: gateway, sequence: Int64(index), identities: identities, appVersion: "0.1.0")
        }
        XCTAssertEqual(events.map(\.type), [.checkin, .checkout])
        let checkin = events[0], checkout = events[1]
        XCTAssertEqual(checkin.visitStartMilliseconds, PresenceHarness.wallOrigin + 500)
        XCTAssertEqual(checkout.visitStartMilliseconds, checkin.visitStartMilliseconds)
        XCTAssertEqual(checkin.idempotencyKey, IdempotencyKey.make(personId: "p1", gatewayId: "door-lab-301", type: .checkin,
                                                                  visitStartMilliseconds: PresenceHarness.wallOrigin + 500))
        XCTAssertEqual(checkout.idempotencyKey, IdempotencyKey.make(personId: "p1", gatewayId: "door-lab-301", type: .checkout,
                                                                   visitStartMilliseconds: PresenceHarness.wallOrigin + 500))
        XCTAssertEqual(checkout.timestampMilliseconds, PresenceHarness.wallOrigin + 14_500, "lost at 4.5 + 10 s")
        XCTAssertEqual(checkout.decidedAtMilliseconds, PresenceHarness.wallOrigin + 194_500)
        XCTAssertNotEqual(checkin.id, checkout.id)
        XCTAssertTrue(checkin.jsonBody().contains(#""uuid": "abababab-abab-abab-abab-abababababab", "major": 1, "minor": 2"#))
    }

    func testSpoofSuspectedKeysOnTheLockoutStart() {
        let event = AttendanceEvent.spoofSuspected(
            personId: "u_1001", tagId: "tag-1001", address: BluetoothAddress(rawValue: 0xC0_11_22_33_44_55), identities: [],
            lockoutStartMilliseconds: 1_789_012_345_678, decidedAtMilliseconds: 1_789_012_345_700, lastRoundTripMilliseconds: 210,
            gateway: GatewayIdentity(id: "door-lab-301"), sequence: 7, appVersion: "1.0.0", id: "x")
        XCTAssertEqual(event.idempotencyKey, IdempotencyKey.make(personId: "u_1001", gatewayId: "door-lab-301",
                                                                 type: .spoofSuspected, visitStartMilliseconds: 1_789_012_345_678))
        XCTAssertNotEqual(event.idempotencyKey, "39c4a6ba3fb70d9bc22431a88a6fce66ab54987301cacbeaf121e556553d5805",
                          "same inputs as the checkin example of docs/event-api.md but another type")
        let body = event.jsonBody()
        XCTAssertTrue(body.contains(#""type": "spoof_suspected""#), body)
        XCTAssertTrue(body.contains(#""timestamp": "2026-09-10T03:52:25.678Z", "decidedAt": "2026-09-10T03:52:25.700Z", "visitStart": "2026-09-10T03:52:25.678Z""#), body)
        XCTAssertTrue(body.contains(#""handshake": {"ok": false, "rt": 210}"#), body)
    }

    func testWallClockMappingRoundTripsAndFloors() {
        let mapping = WallClockMapping(anchor: Instant(nanoseconds: 5_000_000_123), wallMilliseconds: 1_000_000)
        XCTAssertEqual(mapping.wallMilliseconds(at: Instant(nanoseconds: 5_000_000_123)), 1_000_000)
        XCTAssertEqual(mapping.wallMilliseconds(at: Instant(nanoseconds: 5_000_000_122)), 999_999)
        XCTAssertEqual(mapping.wallMilliseconds(at: Instant(nanoseconds: 5_001_000_123)), 1_000_001)
        for ms: Int64 in [0, 1, 999_999, 1_000_000, 1_789_012_345_678, -5] {
            XCTAssertEqual(mapping.wallMilliseconds(at: mapping.instant(atWallMilliseconds: ms)), ms)
        }
        _ = mapping.instant(atWallMilliseconds: .max)
        _ = mapping.instant(atWallMilliseconds: .min)
        _ = mapping.wallMilliseconds(at: Instant(nanoseconds: .min))
    }
}
