import Advertisements
import JSONText

/// Events made up for `outbox enqueue`: shaped like the events of docs/event-api.md, so the test server and the
/// benchmark see realistic bodies. Not real decisions: the key is a 256-bit FNV-based
/// digest of the idempotency key's fields (docs/event-api.md) plus a per-run nonce, not SHA-256.
struct SyntheticEvent {
    var personId: String
    var gatewayId: String
    var type: String
    var visitStartMillis: Int64
    var nonce: UInt64

    var idempotencyKey: String {
        let input = Array("\(personId)|\(gatewayId)|\(type)|\(visitStartMillis)|\(nonce)".utf8)
        var hex = ""
        for lane in 0 ..< 4 as Range<UInt64> {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ (lane &* 0x9E37_79B9_7F4A_7C15)
            for byte in input {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            let text = String(hash, radix: 16)
            hex += String(repeating: "0", count: 16 - text.count) + text
        }
        return hex
    }

    func body(sequence: Int64, key: String, nowMillis: Int64) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("id"); writer.string(uuid(key))
        writer.key("idempotencyKey"); writer.string(key)
        writer.key("sequence"); writer.number(Int(truncatingIfNeeded: sequence))
        writer.key("type"); writer.string(type)
        writer.key("userId"); writer.string(personId)
        writer.key("deviceId"); writer.string(gatewayId)
        writer.key("siteId"); writer.string("S_TEST")
        writer.key("doorId"); writer.string(gatewayId)
        writer.key("timestamp"); writer.string(isoTimestamp(millis: visitStartMillis))
        writer.key("decidedAt"); writer.string(isoTimestamp(millis: nowMillis))
        writer.key("visitStart"); writer.string(isoTimestamp(millis: visitStartMillis))
        writer.key("beacon")
        writer.beginObject()
        writer.key("tag"); writer.string("tag-\(personId)")
        writer.key("address"); writer.string("C0:11:22:33:44:55")
        writer.endObject()
        writer.key("rssiSeries")
        writer.beginArray()
        for value in [-75, -71, -68, -66] { writer.number(value) }
        writer.endArray()
        writer.key("txPower"); writer.number(-59)
        // Every key of a real event's body is present (docs/api/openapi.yaml); a
        // checkout's handshake is null.
        writer.key("handshake"); writer.null()
        writer.key("app")
        writer.beginObject()
        writer.key("version"); writer.string(BeaconGateway.version)
        writer.endObject()
        writer.endObject()
        return Array(writer.text.utf8)
    }

    /// A version-4-shaped UUID from the key's first 32 hex digits.
    private func uuid(_ key: String) -> String {
        var hex = Array(key.prefix(32))
        guard hex.count == 32 else { return "00000000-0000-4000-8000-000000000000" }
        hex[12] = "4"
        hex[16] = "8"
        let s = String(hex)
        func part(_ from: Int, _ to: Int) -> Substring { s[s.index(s.startIndex, offsetBy: from) ..< s.index(s.startIndex, offsetBy: to)] }
        return "\(part(0, 8))-\(part(8, 12))-\(part(12, 16))-\(part(16, 20))-\(part(20, 32))"
    }
}
