/// The one request `/metrics` answers: `GET /metrics` (a query string is ignored), HTTP/1.0
/// or 1.1. Everything else gets a short error; every answer closes the connection.
public enum MetricsRequest {
    public static let limits = RequestConnection.Limits(
        terminator: Array("\r\n\r\n".utf8), maxRequestBytes: 8 * 1024, timeLimit: .seconds(5)
    )

    public enum Verdict: Hashable, Sendable {
        case metrics
        case error(status: Int, reason: String)
    }

    /// Judges a request head (request line and headers, terminator included).
    public static func judge(head: [UInt8]) -> Verdict {
        guard let lineEnd = RequestConnection.find(Array("\r\n".utf8), in: head, from: 0) else {
            return .error(status: 400, reason: "Bad Request")
        }
        let line = head[..<(lineEnd - 2)]
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 > 0x20 && $0 < 0x7F } }) else {
            return .error(status: 400, reason: "Bad Request")
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .error(status: 505, reason: "HTTP Version Not Supported")
        }
        guard String(decoding: parts[0], as: UTF8.self) == "GET" else {
            return .error(status: 405, reason: "Method Not Allowed")
        }
        let target = parts[1].prefix { $0 != UInt8(ascii: "?") }
        guard String(decoding: target, as: UTF8.self) == "/metrics" else {
            return .error(status: 404, reason: "Not Found")
        }
        return .metrics
    }

    /// The HTTP answer: status line, headers, body; `Connection: close`.
    public static func response(status: Int, reason: String, contentType: String, body: String) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        head += "Content-Type: \(contentType)\r\n"
        head += "Content-Length: \(body.utf8.count)\r\n"
        if status == 405 { head += "Allow: GET\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + Array(body.utf8)
    }

    public static func errorResponse(status: Int, reason: String) -> [UInt8] {
        response(status: status, reason: reason, contentType: "text/plain; charset=utf-8", body: reason + "\n")
    }

    public static let tooLarge = errorResponse(status: 431, reason: "Request Header Fields Too Large")
}

/// The status socket's one-answer request: a line `status json` or `status text`. Nothing
/// it accepts changes anything. (Its other request, an enrolment, is `EnrolmentChannel`'s;
/// the limit on a request line is that one's, the longer.)
public enum StatusRequest {
    public static let limits = RequestConnection.Limits(
        terminator: Array("\n".utf8), maxRequestBytes: EnrolmentChannel.maxRequestBytes, timeLimit: .seconds(5)
    )

    public enum Format: String, Hashable, Sendable {
        case json, text
    }

    /// The request line for `format`, as the client sends it.
    public static func line(_ format: Format) -> [UInt8] {
        Array("status \(format.rawValue)\n".utf8)
    }

    /// The format asked for, or nil for anything else.
    public static func judge(head: [UInt8]) -> Format? {
        var line = head
        if line.last == UInt8(ascii: "\n") { line.removeLast() }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        switch String(decoding: line, as: UTF8.self) {
        case "status json": return .json
        case "status text": return .text
        default: return nil
        }
    }

    /// What an unknown or oversized request gets back before the connection closes.
    public static let refusal = Array("error: unknown request; send \"status json\" or \"status text\"\n".utf8)
}
