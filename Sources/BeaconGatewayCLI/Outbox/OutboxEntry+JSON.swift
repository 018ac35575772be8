import AttendanceEvents
import JSONText
import Store
#if canImport(Glibc)
import Glibc
#endif

extension OutboxEntry {
    /// One JSON line for `outbox list --json` and `outbox export`; the event's body is
    /// carried as a string, exactly the bytes that are (or were) sent.
    var jsonLine: String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("sequence"); writer.number(Int(truncatingIfNeeded: sequence))
        writer.key("idempotencyKey"); writer.string(idempotencyKey)
        writer.key("type"); writer.string(type)
        writer.key("personId"); writer.string(personId)
        writer.key("state"); writer.string(state.description)
        writer.key("attempts"); writer.number(attempts)
        writer.key("nextAttempt"); writer.string(isoTimestamp(millis: nextAttemptMillis))
        writer.key("lastStatus"); writer.number(lastStatus)
        writer.key("lastError"); writer.string(lastError)
        writer.key("created"); writer.string(isoTimestamp(millis: createdAtMillis))
        writer.key("updated"); writer.string(isoTimestamp(millis: updatedAtMillis))
        writer.key("body"); writer.string(String(decoding: body, as: UTF8.self))
        writer.endObject()
        return writer.text
    }
}

/// `2026-11-20T06:35:12.345Z` for wall-clock milliseconds: the events' own formatter,
/// which takes any 64-bit value (a damaged row's too) without trapping.
func isoTimestamp(millis: Int64) -> String {
    ISO8601Timestamp.format(millisecondsSinceEpoch: millis)
}

extension Int64 {
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
