import EventLoop
import XCTest
@testable import GatewayCore

/// The server's pause (docs/fleet.md): presence goes on, visits end, nobody new checks in;
/// at the resume whoever is at the door is checked in, their arrival being then.
final class DoorPauseTests: XCTestCase {
    func testWhilePausedOpenVisitsEndAndNobodyNewIsCheckedIn() {
        var door = DoorHarness(DoorHarness.setup(persons: 2))
        door.stay(0, seconds: 3)
        door.perform(door.core.setMode(.paused, at: door.now))
        XCTAssertEqual(door.logged("check-ins paused by the server").count, 1)
        door.stay(1, seconds: 30)
        XCTAssertEqual(door.state(1), .nearby, "at the door, not checked in")
        door.advance(seconds: 200)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin, .checkout], "p0's visit ended normally")
    }

    func testAPersonWhoArrivedDuringThePauseIsCheckedInAtTheResume() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.perform(door.core.setMode(.paused, at: door.now))
        door.stay(0, seconds: 30)
        XCTAssertTrue(door.store.events.isEmpty)
        door.perform(door.core.setMode(.active, at: door.now))
        let resumedAt = door.wall
        door.stay(0, seconds: 1)
        XCTAssertEqual(door.store.events.map(\.type), [.checkin])
        XCTAssertEqual(door.store.events.first?.visitStartMilliseconds ?? 0, resumedAt, accuracy: 1_000,
                       "the arrival is the resume, not the time they came during the pause")
    }

    func testSettingTheSameModeAgainSaysNothing() {
        var door = DoorHarness(DoorHarness.setup(persons: 1))
        door.perform(door.core.setMode(.active, at: door.now))
        XCTAssertTrue(door.logs.filter { $0.message.contains("check-ins") }.isEmpty)
    }
}
