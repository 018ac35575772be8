import EventLoop
import AdvertisingFixtures
import SplitMix
import XCTest
@testable import GatewayCore

/// A whole day at a busy door in virtual time: every visit gets its checkin and its
/// checkout, in order, each once.
final class DoorDayTests: XCTestCase {
    func testADayOfArrivalsAndLeaves() {
        let persons = 150
        // Heard every 10 s (what the decisions need, not what a tag sends: the day's
        // reports stay few): a window that holds two samples.
        let settings = PresenceSettings(window: .seconds(25), lostAfter: .seconds(40))
        var door = DoorHarness(DoorHarness.setup(persons: persons, settings: settings))
        var random = SplitMix64(seed: 0xD00F)
        // Each person: arrive at a random minute, stay 1–6 minutes, leave, come back 10 to
        // 130 minutes later; about 20 visits a day each. Simulated minute by minute.
        var until = [Int](repeating: -1, count: persons)
        var nextVisit = (0 ..< persons).map { _ in Int(random.next() % 240) }
        let minutes = 24 * 60
        var visits = 0
        for minute in 0 ..< minutes {
            for n in 0 ..< persons where nextVisit[n] == minute {
                until[n] = minute + 1 + Int(random.next() % 6)
                nextVisit[n] = until[n] + 10 + Int(random.next() % 120)
                visits += 1
            }
            let present = (0 ..< persons).filter { until[$0] > minute }
            for _ in 0 ..< 6 {
                door.hear(present, rssi: -60)
                door.advance(seconds: 10)
            }
        }
        door.advance(seconds: 600)
        let checkins = door.store.events(.checkin), checkouts = door.store.events(.checkout)
        XCTAssertGreaterThan(visits, 2_000)
        XCTAssertEqual(checkins.count, visits, "one checkin per visit")
        XCTAssertEqual(checkouts.count, visits, "and one checkout")
        XCTAssertEqual(door.store.events.map(\.sequence), Array(1 ... Int64(door.store.events.count)))
        XCTAssertEqual(Set(door.store.events.map(\.idempotencyKey)).count, door.store.events.count)
        var open: [String: Int64] = [:]
        for event in door.store.events {
            if event.type == .checkin {
                XCTAssertNil(open[event.userId], "no second checkin for an open visit")
                open[event.userId] = event.visitStartMilliseconds
            } else {
                XCTAssertEqual(open.removeValue(forKey: event.userId), event.visitStartMilliseconds)
            }
        }
        XCTAssertTrue(open.isEmpty)
        XCTAssertEqual(door.core.uncommittedCount, 0)
    }
}

