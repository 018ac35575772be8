/// Why the last delivery attempt did not succeed, coarse enough for an LED and a status
/// line. Raw values are what the database and `outbox status` show.
public struct DeliveryErrorClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// No connection, connection reset, DNS: the server is unreachable.
    public static let network = DeliveryErrorClass(rawValue: "network")
    /// Connect or total timeout.
    public static let timeout = DeliveryErrorClass(rawValue: "timeout")
    /// Certificate verification or another TLS failure.
    public static let tls = DeliveryErrorClass(rawValue: "tls")
    /// 5xx.
    public static let server = DeliveryErrorClass(rawValue: "server")
    /// 408 or 429: the server asked us to slow down.
    public static let throttled = DeliveryErrorClass(rawValue: "throttled")
    /// 401 or 403: the gateway's token is refused.
    public static let auth = DeliveryErrorClass(rawValue: "auth")
    /// 409: refused by server policy.
    public static let rejected = DeliveryErrorClass(rawValue: "rejected")
    /// Any other 4xx: the event went to the dead letters.
    public static let client = DeliveryErrorClass(rawValue: "client")
    /// An answer that is not HTTP we understand.
    public static let protocolError = DeliveryErrorClass(rawValue: "protocol")

    public var description: String { rawValue }
}
