@testable import Fleet
import XCTest

final class StatusReportTests: XCTestCase {
    private func report() -> StatusReport {
        StatusReport(
            snapshot: sampleSnapshot(),
            visits: [
                OpenVisitSnapshot(personId: "u_1001", state: "PRESENT", sinceMillis: 1_789_012_345_678, rssi: -61, tag: "tag-1001", proven: true),
                OpenVisitSnapshot(personId: "u_1002", state: "UNCONFIRMED", sinceMillis: nil, rssi: nil, tag: nil, proven: false),
            ],
            recentEvents: [RecentEvent(sequence: 42, type: "checkin", personId: "u_1001", atMillis: 1_789_012_345_678)]
        )
    }

    func testJSONListsPersonsEventsAndRoster() {
        let json = report().json()
        XCTAssertTrue(json.hasSuffix("}\n"))
        XCTAssertTrue(json.contains(#""present": 2, "persons": [{"id": "u_1001", "state": "PRESENT", "since": "2026-09-10T03:52:25.678Z", "rssi": -61, "tag": "tag-1001", "proven": true}, {"id": "u_1002", "state": "UNCONFIRMED", "since": null, "rssi": null, "tag": null, "proven": false}]"#), json)
        XCTAssertTrue(json.contains(#""outbox": {"pending": 2, "dead": 1, "rejected": 0, "oldestPendingS": 7}"#), json)
        XCTAssertTrue(json.contains(#""lastEvents": [{"sequence": 42, "type": "checkin", "userId": "u_1001", "at": "2026-09-10T03:52:25.678Z"}]"#), json)
        XCTAssertTrue(json.contains(#""mode": "active""#))
        XCTAssertTrue(json.contains(#""roster": {"source": "file", "revision": null, "persons": 120, "error": null}"#))
    }

    func testTextHasOneLinePerPersonAndEvent() {
        let text = report().text()
        XCTAssertTrue(text.contains("controller  up B8:27:EB:00:00:01 (extended), resets 1\n"), text)
        XCTAssertTrue(text.contains("  u_1001  PRESENT  since 2026-09-10T03:52:25.678Z  rssi -61 dBm  tag tag-1001  proven\n"), text)
        XCTAssertTrue(text.contains("  u_1002  UNCONFIRMED  since -  rssi -  tag -\n"), text)
        XCTAssertTrue(text.contains("  #42  checkin  u_1001  2026-09-10T03:52:25.678Z\n"), text)
    }

    func testSocketPathRule() {
        XCTAssertEqual(StatusSocketPath.resolve(environment: [:]), "/run/beacon-gateway/status.sock")
        XCTAssertEqual(StatusSocketPath.resolve(environment: ["RUNTIME_DIRECTORY": "/run/bg/"]), "/run/bg/status.sock")
        XCTAssertEqual(StatusSocketPath.resolve(environment: ["RUNTIME_DIRECTORY": "/run/a:/run/b"]), "/run/a/status.sock")
        XCTAssertEqual(StatusSocketPath.resolve(environment: ["RUNTIME_DIRECTORY": "relative"]), "/run/beacon-gateway/status.sock")
        XCTAssertEqual(StatusSocketPath.directory(of: "/run/bg/status.sock"), "/run/bg")
    }
}
