import AttendanceEvents

/// Where and how events are delivered (see docs/event-api.md, `[server]`).
public struct ForwarderConfiguration: Hashable, Sendable {
    /// The server's base URL; events go to `{url}/v1/attendance/events`.
    public var url: String
    /// `X-Device-Id`: the gateway id.
    public var deviceId: String
    /// `X-App-Version`.
    public var appVersion: String
    /// The bearer token (secret: never logged); `nil` sends no `Authorization`.
    public var token: [UInt8]?
    /// An extra CA certificate (PEM) trusted besides the system's.
    public var caFile: String?
    /// Total time one request may take, connecting included.
    public var timeout: Duration
    /// Time to establish the connection (TCP and TLS).
    public var connectTimeout: Duration
    /// The longest wait between two attempts of one event.
    public var maxBackoff: Duration
    /// Requests in flight at once (each to a different person: order per person).
    public var maxInFlight: Int

    public init(url: String, deviceId: String, appVersion: String, token: [UInt8]? = nil, caFile: String? = nil,
                timeout: Duration = .seconds(4), connectTimeout: Duration? = nil,
                maxBackoff: Duration = .seconds(300), maxInFlight: Int = 8) {
        self.url = url
        self.deviceId = deviceId
        self.appVersion = appVersion
        self.token = token
        self.caFile = caFile
        self.timeout = timeout
        self.connectTimeout = connectTimeout ?? min(timeout, .seconds(3))
        self.maxBackoff = maxBackoff
        self.maxInFlight = max(1, maxInFlight)
    }

    /// Refuses a URL that would send the token and events in clear text over a network.
    /// The configuration loader refuses it first; this holds for every other caller too.
    func checkTransport() throws(ForwarderError) {
        guard let parsed = ServerURL(url) else { throw .insecureURL(url.contains("@") ? "(not shown)" : url) }
        guard parsed.isAllowedTransport else { throw .insecureURL(parsed.redacted) }
    }

    /// The endpoint: `{url}/v1/attendance/events`, without a doubled slash.
    public var eventsURL: String {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/v1/attendance/events"
    }
}
