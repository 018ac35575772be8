@testable import Fleet
import XCTest

final class HeartbeatBodyTests: XCTestCase {
    func testTheDocumentedFieldsInOrder() {
        XCTAssertEqual(HeartbeatBody.render(sampleSnapshot()), """
        {"gatewayId": "door-lab-301", "siteId": "S_HQ", "doorId": "lab-301", "version": "1.2.0", \
        "startedAt": "2026-09-10T03:52:25.678Z", "sentAt": "2026-09-10T04:52:25.678Z", "uptimeS": 3600, \
        "clockSynced": true, "mode": "active", \
        "controller": {"state": "up", "address": "B8:27:EB:00:00:01", "family": "extended", "resets": 1}, \
        "scanning": true, "present": 3, "reportsPerSecond": 412.5, \
        "outbox": {"pending": 2, "dead": 1, "oldestPendingS": 7}, \
        "roster": {"source": "file", "revision": null, "persons": 120, "error": null}, \
        "lastEventAt": "2026-09-10T03:53:25.678Z"}
        """)
    }

    func testAbsentValuesAreNull() {
        var snapshot = sampleSnapshot()
        snapshot.siteId = nil
        snapshot.lastEventAtMillis = nil
        snapshot.controller = ControllerSnapshot(state: .absent)
        snapshot.roster = RosterStatus(source: "server", revision: "r-43", persons: 7, error: "r-44: persons[3].id: \"x\"")
        let body = HeartbeatBody.render(snapshot)
        XCTAssertTrue(body.contains(#""siteId": null"#))
        XCTAssertTrue(body.contains(#""lastEventAt": null}"#))
        XCTAssertTrue(body.contains(#""controller": {"state": "absent", "address": null, "family": null, "resets": 0}"#))
        XCTAssertTrue(body.contains(#""roster": {"source": "server", "revision": "r-43", "persons": 7, "error": "r-44: persons[3].id: \"x\""}"#))
    }
}
