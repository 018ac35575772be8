@testable import Fleet
import XCTest

/// SPEC §17's "it says so": the heartbeat's `site`, `status` and the metrics of the
/// neighbouring doors (docs/neighbours.md).
final class NeighboursFiguresTests: XCTestCase {
    private func snapshot() -> FleetSnapshot {
        var snapshot = sampleSnapshot()
        snapshot.bus = BusSnapshot(state: "up")
        snapshot.neighbours = NeighboursSnapshot(
            anyDoor: false,
            doors: [.init(id: "door-lab-302", heardAgoSeconds: 0.42, heard: true),
                    .init(id: "door-lab-303", heardAgoSeconds: 25.7, heard: false),
                    .init(id: "door-lab-304", heardAgoSeconds: nil, heard: false)],
            sightingsIn: ["accepted": 40, "forged": 2, "oversized": 1],
            sightingsOut: ["published": 60, "not_sent": 3]
        )
        return snapshot
    }

    func testTheHeartbeatCountsTheNeighboursConfiguredAndHeard() {
        XCTAssertTrue(HeartbeatBody.render(snapshot()).hasSuffix(#""site": {"bus": "up", "neighbours": 3, "heard": 1}}"#))
        var alone = snapshot()
        alone.neighbours = nil
        XCTAssertTrue(HeartbeatBody.render(alone).hasSuffix(#""site": {"bus": "up", "neighbours": 0, "heard": 0}}"#))
    }

    func testStatusShowsEachNeighbourHeardOrSilentAndSinceWhen() {
        let report = StatusReport(snapshot: snapshot(), visits: [], recentEvents: [])
        let text = report.text()
        XCTAssertTrue(text.contains("""
        neighbours  1 of 3 heard
          door-lab-302  heard, last heard 0.4 s ago
          door-lab-303  SILENT, deciding alone for it (last heard 25 s ago)
          door-lab-304  SILENT, deciding alone for it (never heard)

        """), text)
        XCTAssertTrue(report.json().contains(#""neighbours": {"configured": 3, "heard": 1, "anyDoor": false, "doors": [{"id": "door-lab-302", "heard": true, "lastHeardS": 0.4}, {"id": "door-lab-303", "heard": false, "lastHeardS": 25.7}, {"id": "door-lab-304", "heard": false, "lastHeardS": null}]}"#), report.json())
    }

    func testMetricsHaveTheHeardGaugeAndEveryResultOfBothDirections() {
        let text = MetricsExposition.render(snapshot())
        XCTAssertTrue(text.contains("# TYPE beacon_gateway_neighbours_heard gauge\nbeacon_gateway_neighbours_heard 1\n"), text)
        XCTAssertTrue(text.contains("beacon_gateway_neighbours 3\n"), text)
        XCTAssertTrue(text.contains("# TYPE beacon_gateway_sightings_total counter\n"), text)
        for result in NeighboursSnapshot.inResults {
            XCTAssertTrue(text.contains("beacon_gateway_sightings_total{direction=\"in\",result=\"\(result)\"} "), result)
        }
        XCTAssertTrue(text.contains("beacon_gateway_sightings_total{direction=\"in\",result=\"accepted\"} 40\n"), text)
        XCTAssertTrue(text.contains("beacon_gateway_sightings_total{direction=\"in\",result=\"forged\"} 2\n"), text)
        XCTAssertTrue(text.contains("beacon_gateway_sightings_total{direction=\"in\",result=\"stale\"} 0\n"), text)
        XCTAssertTrue(text.contains("beacon_gateway_sightings_total{direction=\"out\",result=\"published\"} 60\n"), text)
        XCTAssertTrue(text.contains("beacon_gateway_sightings_total{direction=\"out\",result=\"not_sent\"} 3\n"), text)
        var alone = snapshot()
        alone.neighbours = nil
        XCTAssertFalse(MetricsExposition.render(alone).contains("beacon_gateway_sightings_total"))
        XCTAssertFalse(MetricsExposition.render(alone).contains("beacon_gateway_neighbours"))
    }
}
