import AttendanceEvents
import JSONText

/// The heartbeat's JSON body (see docs/fleet.md), in the documented key order.
public enum HeartbeatBody {
    public static func render(_ s: FleetSnapshot) -> String {
        var json = JSONWriter()
        json.beginObject()
        json.key("gatewayId"); json.string(s.gatewayId)
        json.key("siteId"); json.string(s.siteId)
        json.key("doorId"); json.string(s.doorId)
        json.key("version"); json.string(s.version)
        json.key("startedAt"); json.string(timestamp(s.startedAtMillis))
        json.key("sentAt"); json.string(timestamp(s.nowMillis))
        json.key("uptimeS"); json.number(s.uptimeSeconds)
        json.key("clockSynced"); json.bool(s.clockSynced)
        json.key("mode"); json.string(s.mode.rawValue)
        json.key("controller"); controller(s.controller, into: &json)
        json.key("scanning"); json.bool(s.scanning)
        json.key("present"); json.number(s.present)
        json.key("reportsPerSecond"); json.number(s.reportsPerSecond)
        json.key("outbox"); outbox(s.outbox, into: &json)
        json.key("roster"); roster(s.roster, into: &json)
        json.key("lastEventAt"); json.string(s.lastEventAtMillis.map(timestamp))
        if !s.sinks.isEmpty {
            json.key("sinks"); sinks(s.sinks, into: &json)
        }
        if let bus = s.bus {
            // SPEC §17's `site`: the bus, and the neighbouring doors heard on it in the
            // last 10 s (docs/neighbours.md).
            json.key("site")
            json.beginObject()
            json.key("bus"); json.string(bus.isUp ? "up" : "down")
            json.key("neighbours"); json.number(s.neighbours?.configured ?? 0)
            json.key("heard"); json.number(s.neighbours?.heard ?? 0)
            json.endObject()
        }
        json.endObject()
        return json.text
    }

    static func timestamp(_ millis: Int64) -> String {
        ISO8601Timestamp.format(millisecondsSinceEpoch: millis)
    }

    static func controller(_ c: ControllerSnapshot, into json: inout JSONWriter) {
        json.beginObject()
        json.key("state"); json.string(c.state.rawValue)
        json.key("address"); json.string(c.address)
        json.key("family"); json.string(c.family)
        json.key("resets"); json.number(c.resets)
        json.endObject()
    }

    static func outbox(_ o: OutboxSnapshot, into json: inout JSONWriter) {
        json.beginObject()
        json.key("pending"); json.number(o.pending)
        json.key("dead"); json.number(o.dead)
        json.key("oldestPendingS"); json.number(Int(o.oldestPendingSeconds.rounded(.down)))
        json.endObject()
    }

    /// Each sink's figures by its name (docs/fleet.md, "Heartbeat"): what `outbox` sums up
    /// as the sink furthest behind, one sink at a time.
    static func sinks(_ sinks: [SinkSnapshot], into json: inout JSONWriter) {
        json.beginObject()
        for sink in sinks {
            json.key(sink.name)
            json.beginObject()
            json.key("pending"); json.number(sink.pending)
            json.key("dead"); json.number(sink.dead)
            json.key("rejected"); json.number(sink.rejected)
            json.key("oldestPendingS"); json.number(Int(sink.oldestPendingSeconds.rounded(.down)))
            json.key("lastSuccessAt"); json.string(sink.lastSuccessMillis.map(timestamp))
            json.key("lastErrorAt"); json.string(sink.lastErrorMillis.map(timestamp))
            json.key("lastErrorClass"); json.string(sink.lastErrorClass)
            json.key("lastError"); json.string(sink.lastError)
            json.endObject()
        }
        json.endObject()
    }

    static func roster(_ r: RosterStatus, into json: inout JSONWriter) {
        json.beginObject()
        json.key("source"); json.string(r.source)
        json.key("revision"); json.string(r.revision)
        json.key("persons"); json.number(r.persons)
        json.key("error"); json.string(r.error)
        json.endObject()
    }
}
