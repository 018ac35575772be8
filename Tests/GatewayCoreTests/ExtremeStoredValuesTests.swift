import EventLoop
import HCI
import XCTest
@testable import GatewayCore

/// A damaged database can hold any 64-bit value where a time belongs (docs/reliability.md):
/// restoring such records, then running the door on them, must never trap.
final class ExtremeStoredValuesTests: XCTestCase {
    func testRecordsWithExtremeTimesRestoreAndRunWithoutATrap() {
        let extremes: [Int64?] = [nil, .min, .min + 1, -1, 0, 1, .max - 1, .max]
        for state in [PresenceState.outside, .nearby, .present, .unconfirmed] {
            for visitStart in extremes {
                for since in extremes {
                    for last in extremes {
                        let record = PersistedPresence(personId: "p0", state: state, visitStartWallMilliseconds: visitStart,
                                                       unconfirmedSinceWallMilliseconds: since, lastSampleWallMilliseconds: last,
                                                       tagId: "t0", address: .init(rawValue: 1), addressType: .publicDevice,
                                                       txPower: nil)
                        let digest = LastHeardDigest(lastHeard: ["p0": last ?? .max])
                        var door = DoorHarness(DoorHarness.setup(persons: 1),
                                               stored: ["p0": record.encode(), LastHeardDigest.storageKey: digest.encode()])
                        door.hear(0, rssi: -60)
                        door.advance(seconds: 400)
                        door.stay(0, seconds: 3)
                        door.advance(seconds: 400)
                    }
                }
            }
        }
    }
}
