import Store

/// The request headers of docs/event-api.md for one event.
public enum RequestHeaders {
    /// Header lines, or `nil` when a value could not be sent safely (a control character
    /// would let a damaged row inject headers): the event is then a dead letter.
    public static func lines(idempotencyKey: String, configuration: ForwarderConfiguration) -> [String]? {
        var lines = [
            "Content-Type: application/json",
            "Accept: application/json",
            // No "Expect: 100-continue" round trip for a body of a few hundred bytes.
            "Expect:",
        ]
        guard isSafe(idempotencyKey), !idempotencyKey.isEmpty,
              isSafe(configuration.deviceId), isSafe(configuration.appVersion) else { return nil }
        lines.append("Idempotency-Key: \(idempotencyKey)")
        lines.append("X-Device-Id: \(configuration.deviceId)")
        lines.append("X-App-Version: \(configuration.appVersion)")
        if let token = configuration.token {
            let text = String(decoding: token, as: UTF8.self)
            guard isSafe(text), !text.isEmpty else { return nil }
            lines.append("Authorization: Bearer \(text)")
        }
        return lines
    }

    /// Visible ASCII and spaces only.
    static func isSafe(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
