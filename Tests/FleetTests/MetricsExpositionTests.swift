@testable import Fleet
import XCTest

final class MetricsExpositionTests: XCTestCase {
    func testEveryFamilyHasHelpTypeAndItsSamples() {
        let text = MetricsExposition.render(sampleSnapshot())
        let lines = text.split(separator: "\n").map(String.init)
        let expected: [(String, String)] = [
            ("beacon_gateway_build_info", "gauge"), ("beacon_gateway_reports_total", "counter"),
            ("beacon_gateway_persons_present", "gauge"), ("beacon_gateway_events_total", "counter"),
            ("beacon_gateway_outbox_events", "gauge"), ("beacon_gateway_outbox_oldest_pending_seconds", "gauge"),
            ("beacon_gateway_deliveries_total", "counter"), ("beacon_gateway_delivery_latency_seconds", "histogram"),
            ("beacon_gateway_controller_up", "gauge"), ("beacon_gateway_controller_resets_total", "counter"),
            ("beacon_gateway_proofs_total", "counter"), ("beacon_gateway_clock_synced", "gauge"),
            ("beacon_gateway_paused", "gauge"), ("process_cpu_seconds_total", "counter"),
            ("process_resident_memory_bytes", "gauge"), ("process_start_time_seconds", "gauge"),
        ]
        for (name, type) in expected {
            XCTAssertTrue(lines.contains("# TYPE \(name) \(type)"), name)
            XCTAssertTrue(lines.contains { $0.hasPrefix("# HELP \(name) ") }, name)
        }
        for sample in [
            #"beacon_gateway_build_info{version="1.2.0"} 1"#,
            #"beacon_gateway_reports_total{kind="tag"} 120"#,
            #"beacon_gateway_reports_total{kind="other"} 380"#,
            "beacon_gateway_persons_present 3",
            #"beacon_gateway_events_total{type="checkin"} 3"#,
            #"beacon_gateway_events_total{type="checkout"} 2"#,
            #"beacon_gateway_events_total{type="spoof_suspected"} 0"#,
            #"beacon_gateway_outbox_events{state="pending"} 2"#,
            #"beacon_gateway_outbox_events{state="dead"} 1"#,
            #"beacon_gateway_outbox_events{state="rejected"} 0"#,
            "beacon_gateway_outbox_oldest_pending_seconds 7.9",
            #"beacon_gateway_deliveries_total{result="stored"} 4"#,
            #"beacon_gateway_deliveries_total{result="duplicate"} 1"#,
            #"beacon_gateway_deliveries_total{result="retry"} 2"#,
            #"beacon_gateway_delivery_latency_seconds_bucket{le="0.05"} 1"#,
            #"beacon_gateway_delivery_latency_seconds_bucket{le="2.5"} 1"#,
            #"beacon_gateway_delivery_latency_seconds_bucket{le="5.0"} 2"#,
            #"beacon_gateway_delivery_latency_seconds_bucket{le="+Inf"} 2"#,
            "beacon_gateway_delivery_latency_seconds_sum 3.02",
            "beacon_gateway_delivery_latency_seconds_count 2",
            "beacon_gateway_controller_up 1",
            "beacon_gateway_controller_resets_total 1",
            #"beacon_gateway_proofs_total{result="ok"} 5"#,
            #"beacon_gateway_proofs_total{result="failed"} 1"#,
            "beacon_gateway_clock_synced 1",
            "beacon_gateway_paused 0",
            "process_cpu_seconds_total 1.25",
            "process_resident_memory_bytes 12345678",
        ] {
            XCTAssertTrue(lines.contains(sample), "missing \(sample) in\n\(text)")
        }
        XCTAssertTrue(text.hasSuffix("\n"))
    }

    /// Corruption found by any path reaches the metrics (docs/reliability.md, "Disk trouble").
    func testDiskTroubleCorruptDatabasesAndSalvagesAreExposed() {
        var snapshot = sampleSnapshot()
        let quiet = MetricsExposition.render(snapshot).split(separator: "\n").map(String.init)
        for sample in ["beacon_gateway_disk_trouble 0", #"beacon_gateway_corrupt_databases_total{result="moved_aside"} 0"#,
                       #"beacon_gateway_salvaged_total{kind="events"} 0"#] {
            XCTAssertTrue(quiet.contains(sample), sample)
        }
        snapshot.counters.diskTrouble = 1
        snapshot.counters.corruption.sound = 1
        snapshot.counters.corruption.movedAside = 2
        snapshot.counters.corruption.salvagedEvents = 95
        snapshot.counters.corruption.salvagedPresence = 3
        snapshot.counters.corruption.unreadableStretches = 4
        snapshot.counters.corruption.unreadableFiles = 1
        let text = MetricsExposition.render(snapshot)
        let lines = text.split(separator: "\n").map(String.init)
        for (name, type) in [("beacon_gateway_disk_trouble", "gauge"), ("beacon_gateway_corrupt_databases_total", "counter"),
                             ("beacon_gateway_salvaged_total", "counter"), ("beacon_gateway_salvage_unreadable_total", "counter")] {
            XCTAssertTrue(lines.contains("# TYPE \(name) \(type)"), name)
        }
        for sample in [
            "beacon_gateway_disk_trouble 1",
            #"beacon_gateway_corrupt_databases_total{result="sound"} 1"#,
            #"beacon_gateway_corrupt_databases_total{result="moved_aside"} 2"#,
            #"beacon_gateway_salvaged_total{kind="events"} 95"#,
            #"beacon_gateway_salvaged_total{kind="presence"} 3"#,
            #"beacon_gateway_salvage_unreadable_total{part="stretch"} 4"#,
            #"beacon_gateway_salvage_unreadable_total{part="file"} 1"#,
        ] {
            XCTAssertTrue(lines.contains(sample), "missing \(sample) in\n\(text)")
        }
    }

    func testHistogramBucketsAreCumulativeAndEndAtTheCount() {
        var histogram = LatencyHistogram()
        for seconds in [0.01, 0.3, 0.3, 90, 1e9, -1, .nan] { histogram.observe(seconds: seconds) }
        XCTAssertEqual(histogram.count, 7)
        let cumulative = histogram.cumulative
        XCTAssertEqual(cumulative.first, 3, "0.01, -1 (as 0) and nan (as 0) are at or below 0.05")
        XCTAssertEqual(cumulative, cumulative.sorted(), "never decreasing")
        XCTAssertEqual(cumulative.last, 6, "1e9 s is beyond the last bound: only in +Inf")
    }

    func testLabelValuesAreEscaped() {
        var snapshot = sampleSnapshot()
        snapshot.version = "1.0 \"beta\"\\\nx"
        let text = MetricsExposition.render(snapshot)
        XCTAssertTrue(text.contains(#"beacon_gateway_build_info{version="1.0 \"beta\"\\\nx"} 1"#), text)
    }

    func testFloatsUseGoSpellings() {
        XCTAssertEqual(MetricsExposition.format(.infinity), "+Inf")
        XCTAssertEqual(MetricsExposition.format(-.infinity), "-Inf")
        XCTAssertEqual(MetricsExposition.format(.nan), "NaN")
        XCTAssertEqual(MetricsExposition.format(0.25), "0.25")
    }

    func testPausedAndControllerDownAndNoProcessFigures() {
        var snapshot = sampleSnapshot()
        snapshot.mode = .paused
        snapshot.controller.state = .recovering
        snapshot.clockSynced = false
        snapshot.process = nil
        let lines = MetricsExposition.render(snapshot).split(separator: "\n")
        XCTAssertTrue(lines.contains("beacon_gateway_paused 1"))
        XCTAssertTrue(lines.contains("beacon_gateway_controller_up 0"))
        XCTAssertTrue(lines.contains("beacon_gateway_clock_synced 0"))
        XCTAssertFalse(lines.contains { $0.hasPrefix("process_") })
    }
}
