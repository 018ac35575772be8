/// Why the session with the broker is not up, in the words the journal, `status` and the
/// heartbeat use (docs/site-bus.md, "When the broker is away"). Each is logged once per
/// change, never per retry.
public enum BusConnectionFault: Hashable, Sendable, CustomStringConvertible {
    /// TCP could not reach the broker (refused, unreachable, name not resolved).
    case unreachable(String)
    /// The TLS handshake failed: most often the broker's certificate is not trusted
    /// (`ca_file`) or does not name the host of `url`.
    case tls(String)
    /// CONNACK: bad user name or password (MQTT 5 0x86, 3.1.1 code 4).
    case badCredentials
    /// CONNACK: not authorized (0x87 / code 5): the user may not connect, or needs a password.
    case notAuthorized
    /// CONNACK: the broker does not speak MQTT 5 (0x84 / code 1): the next attempt uses 3.1.1.
    case protocolVersion
    /// CONNACK: server unavailable, busy or quota exceeded (0x88, 0x89, 0x97 / code 3).
    case brokerUnavailable(Int)
    /// Another CONNACK refusal.
    case refused(Int)
    /// The session was up and ended: the broker closed it, or the keep-alive expired.
    case lost(String)

    /// A label for the metrics and the heartbeat.
    public var kind: String {
        switch self {
        case .unreachable: "unreachable"
        case .tls: "tls"
        case .badCredentials: "bad_credentials"
        case .notAuthorized: "not_authorized"
        case .protocolVersion: "protocol_version"
        case .brokerUnavailable: "broker_unavailable"
        case .refused: "refused"
        case .lost: "lost"
        }
    }

    /// Only an operator can fix these: retried at the longest delay.
    public var needsOperator: Bool {
        switch self {
        case .badCredentials, .notAuthorized, .tls: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case let .unreachable(text): "cannot reach the broker (\(text))"
        case let .tls(text): "TLS handshake failed (\(text)): is the broker's certificate signed by a CA the door trusts (ca_file), for the host in url?"
        case .badCredentials: "the broker refused the user name or password (username, password_file)"
        case .notAuthorized: "the broker refused the user name or password, or its ACL does not let this user connect (username, password_file; mosquitto answers a wrong password this way)"
        case .protocolVersion: "the broker does not accept MQTT 5; trying MQTT 3.1.1"
        case let .brokerUnavailable(code): "the broker is unavailable or busy (reason \(hex(code)))"
        case let .refused(code): "the broker refused the connection (reason \(hex(code)))"
        case let .lost(text): "the session with the broker ended (\(text))"
        }
    }

    /// A CONNACK refusal, MQTT 5 reason code or 3.1.1 return code.
    public static func connack(_ code: Int, version5: Bool) -> BusConnectionFault {
        if version5 {
            switch code {
            case 0x86: return .badCredentials
            case 0x87: return .notAuthorized
            case 0x84: return .protocolVersion
            case 0x88, 0x89, 0x97: return .brokerUnavailable(code)
            default: return .refused(code)
            }
        }
        switch code {
        case 1: return .protocolVersion
        case 3: return .brokerUnavailable(code)
        case 4: return .badCredentials
        case 5: return .notAuthorized
        default: return .refused(code)
        }
    }
}

func hex(_ code: Int) -> String {
    let digits = String(code, radix: 16)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}
