/// The parts of `server.url` that decide whether it may be used and how it may be shown:
/// its scheme, its host and whether it carries `user:password@`.
///
/// Plain `http://` is allowed to loopback hosts only (docs/event-api.md): anywhere else
/// the token and every event would cross the network in clear text. The check is
/// deliberately strict: a host spelled in a form this parser does not recognise as
/// loopback (`127.1`, a decimal address) is treated as remote and refused.
public struct ServerURL: Hashable, Sendable {
    public enum Scheme: String, Hashable, Sendable {
        case http
        case https
    }

    public let scheme: Scheme
    /// The host as written, IPv6 without its brackets, lowercased.
    public let host: String
    /// Whether the authority holds user-info (`user@` or `user:password@`): a credential
    /// that must never be printed or logged.
    public let hasUserInfo: Bool
    /// The URL without its user-info: what may be printed and logged.
    public let redacted: String

    /// `nil` unless `text` starts with `http://` or `https://`.
    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("https://") {
            scheme = .https
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            scheme = .http
            rest = text.dropFirst(7)
        } else {
            return nil
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let path = rest[authority.endIndex...]
        // The last "@" ends the user-info: a password may itself contain "@" unescaped.
        let hostAndPort: Substring
        if let at = authority.lastIndex(of: "@") {
            hasUserInfo = true
            hostAndPort = authority[authority.index(after: at)...]
        } else {
            hasUserInfo = false
            hostAndPort = authority
        }
        if hostAndPort.hasPrefix("[") {
            let inside = hostAndPort.dropFirst().prefix { $0 != "]" }
            host = inside.lowercased()
        } else {
            host = hostAndPort.prefix { $0 != ":" }.lowercased()
        }
        redacted = scheme.rawValue + "://" + hostAndPort + path
    }

    /// `localhost`, an IPv4 address in 127.0.0.0/8 (dotted quad) or the IPv6 `::1`.
    public var isLoopback: Bool {
        host == "localhost" || Self.isIPv4Loopback(host) || Self.isIPv6Loopback(host)
    }

    /// Whether requests to this URL may go out: always over TLS, in clear only to loopback.
    public var isAllowedTransport: Bool {
        scheme == .https || isLoopback
    }

    /// The text an operator reads when a plain-HTTP URL is refused.
    public static let plainHTTPRule =
        "plain http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use https://"

    private static func isIPv4Loopback(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        var octets: [Int] = []
        for part in parts {
            guard (1 ... 3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int(part), value <= 255 else { return false }
            octets.append(value)
        }
        return octets[0] == 127
    }

    /// `::1` in any of its spellings (`0:0:0:0:0:0:0:1`, `::0001`…).
    private static func isIPv6Loopback(_ host: String) -> Bool {
        let halves = splitAtDoubleColon(host)
        guard halves.count <= 2 else { return false }
        func groups(_ text: Substring) -> [UInt16]? {
            if text.isEmpty { return [] }
            var values: [UInt16] = []
            for group in text.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1 ... 4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                values.append(value)
            }
            return values
        }
        guard let head = groups(halves[0]) else { return false }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return false }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return false }
        return all.dropLast().allSatisfy { $0 == 0 } && all[7] == 1
    }

    /// `host` cut at every `::`.
    private static func splitAtDoubleColon(_ host: String) -> [Substring] {
        var pieces: [Substring] = []
        var start = host.startIndex
        var index = host.startIndex
        while index < host.endIndex {
            let next = host.index(after: index)
            if host[index] == ":", next < host.endIndex, host[next] == ":" {
                pieces.append(host[start ..< index])
                index = host.index(after: next)
                start = index
            } else {
                index = next
            }
        }
        pieces.append(host[start...])
        return pieces
    }
}
