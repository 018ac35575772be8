import ArgumentParser
import EventLoop
import Forwarder
import JSONText
import Journal
import Store

/// `outbox status`: counts per state, backlog age, last success and last error class: the
/// whole outbox (the sink furthest behind), then each configured sink's own
/// (docs/event-api.md, "Sinks").
struct OutboxStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Counts per state, oldest pending age, last success and the last error class."
    )

    @OptionGroup var location: OutboxLocation

    @Flag(name: .long, help: "One JSON object instead of text.")
    var json = false

    func run() throws {
        let noOutbox: ((String, String) -> Void)? = json ? { path, message in Self.printNoOutbox(path: path, message: message) } : nil
        let store = try location.openStore(readOnly: true, noOutbox: noOutbox)
        let now = SystemClock().wallMilliseconds
        let status = try orFail { () throws(StoreError) in try store.status(nowMillis: now) }
        let retention = try orFail { () throws(StoreError) in try store.retentionTotals() }
        let sinks = try orFail { () throws(StoreError) in try store.sinkStatuses(nowMillis: now) }
        let amber = ForwarderStatus(outbox: status, inFlight: 0, authRefused: status.isFailing && status.lastErrorClass == .auth).amber
        let errorClass = status.isFailing ? status.lastErrorClass?.rawValue : nil
        if json {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("outbox"); writer.string(store.path)
            writer.key("exists"); writer.bool(true)
            writer.key("pending"); writer.number(status.pending)
            writer.key("sent"); writer.number(status.sent)
            writer.key("rejected"); writer.number(status.rejected)
            writer.key("dead"); writer.number(status.dead)
            writer.key("backlog"); writer.number(status.backlog)
            writer.key("oldestPendingAgeSeconds")
            if let age = status.oldestPendingAgeMillis { writer.number(Double(age) / 1_000, fractionDigits: 3) } else { writer.null() }
            writer.key("lastSuccess"); writer.string(status.lastSuccessMillis.map { isoTimestamp(millis: $0) })
            writer.key("lastErrorClass"); writer.string(errorClass)
            writer.key("lastError"); writer.string(status.isFailing ? status.lastError : nil)
            writer.key("lastErrorAt"); writer.string(status.lastErrorMillis.map { isoTimestamp(millis: $0) })
            writer.key("lastSequence"); writer.number(Int(truncatingIfNeeded: status.lastSequence))
            writer.key("amber"); writer.string("\(amber)")
            // What retention removed from this file so far (docs/event-api.md, "Retention").
            writer.key("pruned")
            writer.beginObject()
            writer.key("sent"); writer.number(retention.pruned.sent)
            writer.key("rejected"); writer.number(retention.pruned.rejected)
            writer.key("dead"); writer.number(retention.pruned.dead)
            writer.key("unsent"); writer.number(retention.pruned.unsent)
            writer.endObject()
            writer.key("lastPrune"); writer.string(retention.lastPruneMillis.map { isoTimestamp(millis: $0) })
            writer.key("sinks")
            writer.beginObject()
            for sink in sinks {
                writer.key(sink.sink ?? "")
                writer.beginObject()
                writer.key("pending"); writer.number(sink.pending)
                writer.key("sent"); writer.number(sink.sent)
                writer.key("rejected"); writer.number(sink.rejected)
                writer.key("dead"); writer.number(sink.dead)
                writer.key("oldestPendingAgeSeconds")
                if let age = sink.oldestPendingAgeMillis { writer.number(Double(age) / 1_000, fractionDigits: 3) } else { writer.null() }
                writer.key("lastSuccess"); writer.string(sink.lastSuccessMillis.map { isoTimestamp(millis: $0) })
                writer.key("lastErrorClass"); writer.string(sink.isFailing ? sink.lastErrorClass?.rawValue : nil)
                writer.key("lastError"); writer.string(sink.isFailing ? sink.lastError : nil)
                writer.key("lastErrorAt"); writer.string(sink.lastErrorMillis.map { isoTimestamp(millis: $0) })
                writer.endObject()
            }
            writer.endObject()
            writer.endObject()
            writeStandardOutput(writer.text + "\n")
            return
        }
        var text = "outbox \(store.path)\n"
        text += "  pending \(status.pending) · sent \(status.sent) · rejected \(status.rejected) · dead \(status.dead)\n"
        if let age = status.oldestPendingAgeMillis { text += "  oldest pending: \(age / 1_000) s old\n" }
        text += "  last success: \(status.lastSuccessMillis.map { isoTimestamp(millis: $0) } ?? "never")\n"
        if let errorClass {
            text += "  failing: \(errorClass) (\(status.lastError ?? "")) since \(status.lastErrorMillis.map { isoTimestamp(millis: $0) } ?? "?")\n"
            if errorClass == DeliveryErrorClass.auth.rawValue {
                text += "  the server refuses the gateway's token (401/403): check server.token_file\n"
            }
        }
        if status.dead > 0 { text += "  \(status.dead) dead letter(s): `beacon-gateway outbox list --state dead`, then `outbox retry-dead`\n" }
        text += "  last sequence: \(status.lastSequence) · amber: \(amber)\n"
        for sink in sinks {
            text += "  sink \(sink.sink ?? ""): pending \(sink.pending) · sent \(sink.sent) · rejected \(sink.rejected) · dead \(sink.dead)"
            if let age = sink.oldestPendingAgeMillis { text += " · oldest \(age / 1_000) s" }
            text += " · last success \(sink.lastSuccessMillis.map { isoTimestamp(millis: $0) } ?? "never")"
            if sink.isFailing, let errorClass = sink.lastErrorClass { text += " · failing: \(errorClass) (\(sink.lastError ?? ""))" }
            text += "\n"
        }
        let pruned = retention.pruned
        text += "  retention pruned: sent \(pruned.sent) · rejected \(pruned.rejected) · dead \(pruned.dead)"
            + " · unsent \(pruned.unsent) · last \(retention.lastPruneMillis.map { isoTimestamp(millis: $0) } ?? "never")\n"
        writeStandardOutput(text)
    }

    /// `--json` before the agent's first run: still one JSON object, which says there is no
    /// outbox yet (the exit code stays 1, as for the text).
    private static func printNoOutbox(path: String, message: String) {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("outbox"); writer.string(path)
        writer.key("exists"); writer.bool(false)
        writer.key("error"); writer.string(message)
        writer.endObject()
        writeStandardOutput(writer.text + "\n")
    }
}
