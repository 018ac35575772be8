import Advertisements
import BluetoothCrypto
import HCI

/// The event's `idempotencyKey` (see docs/event-api.md): lowercase hex SHA-256 of
/// `personId|gatewayId|type|visitStartMillis`.
///
/// Built only from what survives a restart — ids, the type and the visit's start in
/// wall-clock milliseconds (persisted with the visit) — never from a random id or the
/// sequence, so an event re-created after a crash carries the same key and the server
/// drops the duplicate. Checkin and checkout of one visit differ by type only;
/// `spoof_suspected` uses the lockout's start.
public enum IdempotencyKey {
    public static func make(personId: String, gatewayId: String, type: AttendanceEventType,
                            visitStartMilliseconds: Int64) -> String {
        let text = "\(personId)|\(gatewayId)|\(type.rawValue)|\(visitStartMilliseconds)"
        return HexText.lowercase(SHA256.hash(Array(text.utf8)))
    }
}
