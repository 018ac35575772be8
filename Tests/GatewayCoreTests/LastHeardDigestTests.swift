import HCI
import XCTest
@testable import GatewayCore

final class LastHeardDigestTests: XCTestCase {
    func testRoundTrip() {
        let digest = LastHeardDigest(lastHeard: ["u_1": 1_789_000_000_123, "ü-2": -5, "u_3": 0])
        XCTAssertEqual(LastHeardDigest(decoding: digest.encode()), digest)
        XCTAssertEqual(LastHeardDigest(decoding: LastHeardDigest().encode()), LastHeardDigest())
    }

    func testTruncatedOrForeignBytesAreRefused() {
        let bytes = LastHeardDigest(lastHeard: ["u_1": 42]).encode()
        for length in 0 ..< bytes.count where length != 5 {
            XCTAssertNil(LastHeardDigest(decoding: Array(bytes.prefix(length))), "\(length) bytes")
        }
        XCTAssertNil(LastHeardDigest(decoding: PersistedPresence(
            personId: "u_1", state: .present, visitStartWallMilliseconds: 1, unconfirmedSinceWallMilliseconds: nil,
            lastSampleWallMilliseconds: 2, tagId: "t", address: BluetoothAddress(rawValue: 0), addressType: .publicDevice, txPower: nil
        ).encode()))
    }

    /// The later of the two last samples wins: both are times the person was heard.
    func testAppliedTakesTheLaterLastSample() {
        var record = PersistedPresence(
            personId: "u_1", state: .present, visitStartWallMilliseconds: 1_000, unconfirmedSinceWallMilliseconds: nil,
            lastSampleWallMilliseconds: 5_000, tagId: "t", address: BluetoothAddress(rawValue: 0), addressType: .publicDevice, txPower: nil
        )
        let digest = LastHeardDigest(lastHeard: ["u_1": 65_000, "u_2": 1])
        XCTAssertEqual(digest.applied(to: record).lastSampleWallMilliseconds, 65_000)
        XCTAssertEqual(digest.applied(to: record).state, .present)
        XCTAssertEqual(digest.applied(to: record).visitStartWallMilliseconds, 1_000)
        record.lastSampleWallMilliseconds = 70_000
        XCTAssertEqual(digest.applied(to: record).lastSampleWallMilliseconds, 70_000, "an event's record saved later stays")
        record.personId = "u_9"
        XCTAssertEqual(digest.applied(to: record), record)
    }
}
