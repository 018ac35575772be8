@testable import GatewayCore
import XCTest

final class DoorCheckpointsTests: XCTestCase {
    /// The hot path reads a tag's person only when its mark is new; the set is the same.
    func testHeardAsksForThePersonOnlyWhenTheMarkIsNew() {
        var checkpoints = DoorCheckpoints()
        var asked = 0
        func person() -> String {
            asked += 1
            return "p0"
        }
        checkpoints.heard(person(), tagIndex: 3)
        checkpoints.heard(person(), tagIndex: 3)
        XCTAssertEqual(asked, 1)
        XCTAssertEqual(checkpoints.heardPersons, ["p0"])
        XCTAssertTrue(checkpoints.heardSinceCheckpoint)
        // Saved: a new epoch, so the next report puts the person back.
        checkpoints.forgetHeard(["p0"])
        XCTAssertEqual(checkpoints.heardPersons, [])
        checkpoints.heard(person(), tagIndex: 3)
        XCTAssertEqual(asked, 2)
        XCTAssertEqual(checkpoints.heardPersons, ["p0"])
        // No tag index (no mark to keep): asked every time.
        checkpoints.heard(person(), tagIndex: -1)
        checkpoints.heard(person(), tagIndex: -1)
        XCTAssertEqual(asked, 4)
    }
}
