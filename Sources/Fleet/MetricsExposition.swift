/// The Prometheus text exposition format 0.0.4 (not OpenMetrics) of a snapshot: the
/// families of docs/fleet.md, each with `# HELP` and `# TYPE` (counters under their
/// `_total` name), then the standard `process_*` metrics.
public enum MetricsExposition {
    /// The `Content-Type` this text is served with.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func render(_ snapshot: FleetSnapshot) -> String {
        var out = Writer()
        let c = snapshot.counters
        out.family("beacon_gateway_build_info", .gauge, "The running version (always 1).")
        out.sample("beacon_gateway_build_info", labels: [("version", snapshot.version)], 1)
        out.family("beacon_gateway_reports_total", .counter, "Advertising reports heard, from configured tags or other devices.")
        out.sample("beacon_gateway_reports_total", labels: [("kind", "tag")], c.tagReports)
        out.sample("beacon_gateway_reports_total", labels: [("kind", "other")], c.otherReports)
        out.family("beacon_gateway_persons_present", .gauge, "Persons with an open visit (PRESENT or UNCONFIRMED).")
        out.sample("beacon_gateway_persons_present", snapshot.present)
        out.family("beacon_gateway_events_total", .counter, "Events committed to the outbox, by type.")
        out.sample("beacon_gateway_events_total", labels: [("type", "checkin")], c.checkins)
        out.sample("beacon_gateway_events_total", labels: [("type", "checkout")], c.checkouts)
        out.sample("beacon_gateway_events_total", labels: [("type", "spoof_suspected")], c.spoofSuspected)
        out.family("beacon_gateway_outbox_events", .gauge, "Events in the outbox, by state.")
        out.sample("beacon_gateway_outbox_events", labels: [("state", "pending")], snapshot.outbox.pending)
        out.sample("beacon_gateway_outbox_events", labels: [("state", "dead")], snapshot.outbox.dead)
        out.sample("beacon_gateway_outbox_events", labels: [("state", "rejected")], snapshot.outbox.rejected)
        out.family("beacon_gateway_outbox_oldest_pending_seconds", .gauge, "Age of the oldest pending event (0 when none).")
        out.sample("beacon_gateway_outbox_oldest_pending_seconds", snapshot.outbox.oldestPendingSeconds)
        // Each sink's own (docs/fleet.md, "Metrics"); the two above are the sink furthest behind.
        out.family("beacon_gateway_sink_events", .gauge, "Events an outbox sink has not delivered, by sink and state.")
        for sink in snapshot.sinks {
            out.sample("beacon_gateway_sink_events", labels: [("sink", sink.name), ("state", "pending")], sink.pending)
            out.sample("beacon_gateway_sink_events", labels: [("sink", sink.name), ("state", "dead")], sink.dead)
            out.sample("beacon_gateway_sink_events", labels: [("sink", sink.name), ("state", "rejected")], sink.rejected)
        }
        out.family("beacon_gateway_sink_oldest_pending_seconds", .gauge, "Age of a sink's oldest pending event (0 when none).")
        for sink in snapshot.sinks {
            out.sample("beacon_gateway_sink_oldest_pending_seconds", labels: [("sink", sink.name)], sink.oldestPendingSeconds)
        }
        out.family("beacon_gateway_sink_failing", .gauge, "1 while a sink's last attempt failed and nothing succeeded since.")
        for sink in snapshot.sinks {
            out.sample("beacon_gateway_sink_failing", labels: [("sink", sink.name)], sink.lastErrorMillis == nil ? 0 : 1)
        }
        out.family("beacon_gateway_deliveries_total", .counter, "Answers to event deliveries, by result.")
        let d = c.deliveries
        for (result, value) in [("stored", d.stored), ("duplicate", d.duplicate), ("rejected", d.rejected), ("dead", d.dead), ("retry", d.retry)] {
            out.sample("beacon_gateway_deliveries_total", labels: [("result", result)], value)
        }
        out.family("beacon_gateway_delivery_latency_seconds", .histogram, "From an event's decision to the server's 201 or 200.")
        out.histogram("beacon_gateway_delivery_latency_seconds", c.deliveryLatency)
        out.family("beacon_gateway_controller_up", .gauge, "1 while the Bluetooth controller is up and scanning.")
        out.sample("beacon_gateway_controller_up", snapshot.controller.state == .up ? 1 : 0)
        out.family("beacon_gateway_controller_resets_total", .counter, "Controller recoveries (reset and re-initialisation).")
        out.sample("beacon_gateway_controller_resets_total", c.controllerResets)
        out.family("beacon_gateway_irk_tries_total", .counter, "AES calls made to resolve private addresses (one per IRK tried).")
        out.sample("beacon_gateway_irk_tries_total", c.irkTries)
        out.family("beacon_gateway_resolutions_turned_away_total", .counter,
                   "Unknown private addresses not resolved at a report: too few sightings for the gate, or the budget spent.")
        out.sample("beacon_gateway_resolutions_turned_away_total", labels: [("reason", "gate")], c.resolutionsGated)
        out.sample("beacon_gateway_resolutions_turned_away_total", labels: [("reason", "budget")], c.resolutionsDeferred)
        out.family("beacon_gateway_resolution_gate", .gauge, "Sightings an unknown private address needs before it is resolved (1 unless flooded).")
        out.sample("beacon_gateway_resolution_gate", c.resolutionGate)
        out.family("beacon_gateway_proofs_total", .counter, "Proof handshakes, by result.")
        out.sample("beacon_gateway_proofs_total", labels: [("result", "ok")], c.proofsOK)
        out.sample("beacon_gateway_proofs_total", labels: [("result", "failed")], c.proofsFailed)
        out.family("beacon_gateway_heartbeats_total", .counter, "Heartbeats sent to the server, by result.")
        out.sample("beacon_gateway_heartbeats_total", labels: [("result", "sent")], c.heartbeatsSent)
        out.sample("beacon_gateway_heartbeats_total", labels: [("result", "failed")], c.heartbeatsFailed)
        out.family("beacon_gateway_roster_fetches_total", .counter, "Roster requests to the server, by result.")
        out.sample("beacon_gateway_roster_fetches_total", labels: [("result", "updated")], c.rosterFetches.updated)
        out.sample("beacon_gateway_roster_fetches_total", labels: [("result", "unchanged")], c.rosterFetches.unchanged)
        out.sample("beacon_gateway_roster_fetches_total", labels: [("result", "refused")], c.rosterFetches.refused)
        out.sample("beacon_gateway_roster_fetches_total", labels: [("result", "refused_again")], c.rosterFetches.refusedAgain)
        out.sample("beacon_gateway_roster_fetches_total", labels: [("result", "failed")], c.rosterFetches.failed)
        out.family("beacon_gateway_disk_trouble", .gauge, "1 while events cannot be stored (full, read-only, corrupt, locked): decisions are held.")
        out.sample("beacon_gateway_disk_trouble", c.diskTrouble)
        let corruption = c.corruption
        out.family("beacon_gateway_corrupt_databases_total", .counter, "Databases found corrupt, by what became of them.")
        out.sample("beacon_gateway_corrupt_databases_total", labels: [("result", "sound")], corruption.sound)
        out.sample("beacon_gateway_corrupt_databases_total", labels: [("result", "moved_aside")], corruption.movedAside)
        out.family("beacon_gateway_salvaged_total", .counter, "Rows copied out of corrupt databases into fresh ones, by kind.")
        out.sample("beacon_gateway_salvaged_total", labels: [("kind", "events")], corruption.salvagedEvents)
        out.sample("beacon_gateway_salvaged_total", labels: [("kind", "presence")], corruption.salvagedPresence)
        out.family("beacon_gateway_salvage_unreadable_total", .counter,
                   "What a salvage could not read (its rows lost): stretches of the events table, or whole files.")
        out.sample("beacon_gateway_salvage_unreadable_total", labels: [("part", "stretch")], corruption.unreadableStretches)
        out.sample("beacon_gateway_salvage_unreadable_total", labels: [("part", "file")], corruption.unreadableFiles)
        if let bus = snapshot.bus {
            out.family("beacon_gateway_bus_up", .gauge, "1 while the session with the site's MQTT broker is up.")
            out.sample("beacon_gateway_bus_up", bus.isUp ? 1 : 0)
            out.family("beacon_gateway_bus_published_total", .counter, "Messages the broker acknowledged or refused, by topic kind and result.")
            for kind in ["status", "events", "presence", "discovery", "sightings"] {
                for result in ["accepted", "refused"] {
                    out.sample("beacon_gateway_bus_published_total", labels: [("topic_kind", kind), ("result", result)],
                               bus.published[.init(topicKind: kind, result: result)] ?? 0)
                }
            }
            out.family("beacon_gateway_bus_refused_total", .counter, "Messages from the broker's side the door refused, by reason.")
            for reason in ["unexpected_topic", "qos2", "oversized", "publish_refused", "too_large"] {
                out.sample("beacon_gateway_bus_refused_total", labels: [("reason", reason)], bus.refused[reason] ?? 0)
            }
        }
        if let neighbours = snapshot.neighbours {
            out.family("beacon_gateway_neighbours", .gauge, "Neighbouring doors configured (under \"*\": seen on the bus so far).")
            out.sample("beacon_gateway_neighbours", neighbours.configured)
            out.family("beacon_gateway_neighbours_heard", .gauge, "Neighbouring doors heard within the last 10 s.")
            out.sample("beacon_gateway_neighbours_heard", neighbours.heard)
            out.family("beacon_gateway_sightings_total", .counter,
                       "Sighting reports: in, the neighbours' (accepted or the refusal's reason); out, this door's.")
            for result in NeighboursSnapshot.inResults {
                out.sample("beacon_gateway_sightings_total", labels: [("direction", "in"), ("result", result)],
                           neighbours.sightingsIn[result] ?? 0)
            }
            for result in NeighboursSnapshot.outResults {
                out.sample("beacon_gateway_sightings_total", labels: [("direction", "out"), ("result", result)],
                           neighbours.sightingsOut[result] ?? 0)
            }
        }
        out.family("beacon_gateway_clock_synced", .gauge, "1 while the kernel reports the system clock synchronised.")
        out.sample("beacon_gateway_clock_synced", snapshot.clockSynced ? 1 : 0)
        out.family("beacon_gateway_paused", .gauge, "1 while check-ins are paused by the server.")
        out.sample("beacon_gateway_paused", snapshot.mode == .paused ? 1 : 0)
        if let process = snapshot.process {
            out.family("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.")
            out.sample("process_cpu_seconds_total", process.cpuSeconds)
            out.family("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.")
            out.sample("process_resident_memory_bytes", process.residentBytes)
            out.family("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.")
            out.sample("process_start_time_seconds", process.startTimeSeconds)
        }
        return out.text
    }

    enum MetricType: String {
        case counter, gauge, histogram
    }

    struct Writer {
        var text = ""

        mutating func family(_ name: String, _ type: MetricType, _ help: String) {
            text += "# HELP \(name) \(MetricsExposition.escapeHelp(help))\n# TYPE \(name) \(type.rawValue)\n"
        }

        mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: UInt64) {
            line(name, labels, String(value))
        }

        mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Int) {
            line(name, labels, String(value))
        }

        mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Double) {
            line(name, labels, MetricsExposition.format(value))
        }

        mutating func histogram(_ name: String, _ histogram: LatencyHistogram) {
            for (bound, count) in zip(LatencyHistogram.bounds, histogram.cumulative) {
                line(name + "_bucket", [("le", MetricsExposition.format(bound))], String(count))
            }
            line(name + "_bucket", [("le", "+Inf")], String(histogram.count))
            line(name + "_sum", [], MetricsExposition.format(histogram.sum))
            line(name + "_count", [], String(histogram.count))
        }

        private mutating func line(_ name: String, _ labels: [(String, String)], _ value: String) {
            text += name
            if !labels.isEmpty {
                text += "{"
                text += labels.map { "\($0.0)=\"\(MetricsExposition.escapeLabel($0.1))\"" }.joined(separator: ",")
                text += "}"
            }
            text += " " + value + "\n"
        }
    }

    /// Go's float syntax, which Prometheus parses: `+Inf`, `-Inf`, `NaN` spelled its way.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "+Inf" }
        return value.description
    }

    /// Label values escape `\`, `"` and line feeds.
    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// Help text escapes `\` and line feeds.
    static func escapeHelp(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
