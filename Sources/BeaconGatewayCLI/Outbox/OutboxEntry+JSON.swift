import GatewayCore
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

/// `2026-11-20T06:35:12.345Z` for wall-clock milliseconds.
func isoTimestamp(millis: Int64) -> String {
    var seconds = time_t(millis.dividedRoundingDown(by: 1_000))
    let fraction = Int(millis - Int64(seconds) * 1_000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
        + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(fraction), 3))Z"
}

extension Int64 {
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
