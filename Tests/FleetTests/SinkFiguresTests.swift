@testable import Fleet
import XCTest

/// Each outbox sink's own figures (docs/fleet.md): the heartbeat's `sinks`, the
/// `beacon_gateway_sink_*` metrics and `status`, beside the whole outbox's.
final class SinkFiguresTests: XCTestCase {
    func twoSinks() -> FleetSnapshot {
        var snapshot = sampleSnapshot()
        snapshot.sinks = [
            SinkSnapshot(name: "server", pending: 0, dead: 1, rejected: 2, oldestPendingSeconds: 0,
                         lastSuccessMillis: 1_789_012_345_678),
            SinkSnapshot(name: "mqtt", pending: 40, dead: 0, rejected: 0, oldestPendingSeconds: 86_400.5,
                         lastSuccessMillis: nil, lastErrorMillis: 1_789_012_345_000, lastErrorClass: "network",
                         lastError: "connection refused"),
        ]
        return snapshot
    }

    func testTheHeartbeatKeepsItsOutboxAndAddsEachSinkAfterLastEventAt() {
        let body = HeartbeatBody.render(twoSinks())
        XCTAssertTrue(body.contains(#""outbox": {"pending": 2, "dead": 1, "oldestPendingS": 7}"#), body)
        XCTAssertTrue(body.hasSuffix("""
            "lastEventAt": "2026-09-10T03:53:25.678Z", "sinks": {\
            "server": {"pending": 0, "dead": 1, "rejected": 2, "oldestPendingS": 0, \
            "lastSuccessAt": "2026-09-10T03:52:25.678Z", "lastErrorAt": null, "lastErrorClass": null, "lastError": null}, \
            "mqtt": {"pending": 40, "dead": 0, "rejected": 0, "oldestPendingS": 86400, \
            "lastSuccessAt": null, "lastErrorAt": "2026-09-10T03:52:25.000Z", "lastErrorClass": "network", \
            "lastError": "connection refused"}}}
            """), body)
        XCTAssertFalse(HeartbeatBody.render(sampleSnapshot()).contains("sinks"), "absent when no sink runs")
    }

    func testEachSinkHasItsOwnMetrics() {
        let lines = MetricsExposition.render(twoSinks()).split(separator: "\n").map(String.init)
        for sample in [
            #"beacon_gateway_sink_events{sink="server",state="pending"} 0"#,
            #"beacon_gateway_sink_events{sink="server",state="dead"} 1"#,
            #"beacon_gateway_sink_events{sink="server",state="rejected"} 2"#,
            #"beacon_gateway_sink_events{sink="mqtt",state="pending"} 40"#,
            #"beacon_gateway_sink_oldest_pending_seconds{sink="mqtt"} 86400.5"#,
            #"beacon_gateway_sink_failing{sink="server"} 0"#,
            #"beacon_gateway_sink_failing{sink="mqtt"} 1"#,
            "# TYPE beacon_gateway_sink_events gauge",
            #"beacon_gateway_outbox_events{state="pending"} 2"#,
        ] {
            XCTAssertTrue(lines.contains(sample), sample)
        }
    }

    func testStatusShowsEachSink() {
        let report = StatusReport(snapshot: twoSinks(), visits: [], recentEvents: [])
        XCTAssertTrue(report.json().contains(#""sinks": {"server": {"pending": 0, "dead": 1"#), report.json())
        let text = report.text()
        XCTAssertTrue(text.contains("\n  server  0 pending, 1 dead, 2 rejected\n"), text)
        XCTAssertTrue(text.contains("\n  mqtt  40 pending, 0 dead, 0 rejected · failing at 2026-09-10T03:52:25.000Z: network\n"), text)
    }
}
