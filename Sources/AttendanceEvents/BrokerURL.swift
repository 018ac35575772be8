/// `mqtt.url` (docs/site-bus.md): `mqtts://host[:port]`, or `mqtt://` to a loopback host
/// only, as for `server.url` (a password and every event would otherwise cross the
/// network in clear text). No path, query or user-info: the user name and the password
/// file have keys of their own.
public struct BrokerURL: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Hashable, Sendable {
        case mqtt
        case mqtts
    }

    public let scheme: Scheme
    /// The host as written, IPv6 without its brackets, lowercased.
    public let host: String
    public let port: Int

    /// What is wrong with a text that is not a usable broker URL, in an operator's words
    /// (without echoing a user-info part, which may hold a password).
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        case scheme
        case userInfo
        case noHost
        case port
        case path
        case plainToRemote

        public var description: String {
            switch self {
            case .scheme: "must start with mqtts:// (or mqtt:// to a loopback host)"
            case .userInfo: "must not hold a user name or password (use username and password_file)"
            case .noHost: "has no host name"
            case .port: "has a port that is not a number from 1 to 65535"
            case .path: "must be mqtts://host[:port] without a path, query or fragment"
            case .plainToRemote: "plain mqtt:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use mqtts://"
            }
        }
    }

    public static func parse(_ text: String) -> Result<BrokerURL, Problem> {
        let scheme: Scheme
        let rest: Substring
        if text.hasPrefix("mqtts://") {
            scheme = .mqtts
            rest = text.dropFirst(8)
        } else if text.hasPrefix("mqtt://") {
            scheme = .mqtt
            rest = text.dropFirst(7)
        } else {
            return .failure(.scheme)
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("@") { return .failure(.userInfo) }
        if authority.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" || $0 == " " || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true }) {
            return .failure(.path)
        }
        let host: String
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(.noHost) }
            host = authority[authority.index(after: authority.startIndex) ..< close].lowercased()
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(.path) }
                portText = after.dropFirst()
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0].lowercased()
            if parts.count == 2 { portText = parts[1] }
        }
        guard !host.isEmpty else { return .failure(.noHost) }
        var port = scheme == .mqtts ? 8883 : 1883
        if let portText {
            guard let value = Int(portText), (1 ... 65535).contains(value), portText.allSatisfy(\.isNumber) else { return .failure(.port) }
            port = value
        }
        let url = BrokerURL(scheme: scheme, host: host, port: port)
        guard url.scheme == .mqtts || url.isLoopback else { return .failure(.plainToRemote) }
        return .success(url)
    }

    init(scheme: Scheme, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Whether the session is encrypted (and the broker's certificate verified).
    public var usesTLS: Bool { scheme == .mqtts }

    /// The same rule as the server's URL: `localhost`, 127.0.0.0/8 or `::1`.
    public var isLoopback: Bool {
        ServerURL("http://" + (host.contains(":") ? "[\(host)]" : host))?.isLoopback ?? false
    }

    public var description: String {
        "\(scheme.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
