import EventLoop

/// Posts heartbeats (see docs/fleet.md) to `{url}/v1/gateways/{id}/heartbeat` through
/// libcurl on the loop, beside the event deliveries and never through the outbox: only
/// the latest state matters, so a failed heartbeat is counted and not retried (the next
/// one carries the news). At most one is in flight; one due while the last is still
/// running is skipped rather than queued.
///
/// Its own transfer set and connection: a slow heartbeat never holds an event back.
public final class HeartbeatSender {
    public enum Outcome: Hashable, Sendable {
        /// A 2xx answer.
        case sent(status: Int)
        /// Another status, a timeout or a network error.
        case failed(String)
        /// The last heartbeat was still in flight.
        case skipped
    }

    public private(set) var configuration: ForwarderConfiguration
    private let request: SingleRequestDriver
    private var caBundle: [UInt8]?
    private let onOutcome: (Outcome) -> Void

    public convenience init(loop: EventLoop, configuration: ForwarderConfiguration,
                            onOutcome: @escaping (Outcome) -> Void) throws(ForwarderError) {
        try self.init(loop: loop, configuration: configuration,
                      transfers: try HTTPTransfers(loop: loop, maxConnections: 1), onOutcome: onOutcome)
    }

    /// - Parameter transfers: libcurl's in production; a scripted one in tests.
    init(loop: EventLoop, configuration: ForwarderConfiguration, transfers: any TransferSession,
         onOutcome: @escaping (Outcome) -> Void) throws(ForwarderError) {
        self.configuration = configuration
        self.onOutcome = onOutcome
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        request = SingleRequestDriver(transfers: transfers)
        request.onFinished = { [unowned self] result, _ in self.finished(result) }
    }

    /// New settings (SIGHUP); a heartbeat in flight finishes with the old ones.
    public func reload(_ configuration: ForwarderConfiguration) throws(ForwarderError) {
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        self.configuration = configuration
    }

    public func stop() {
        request.cancel()
    }

    /// Sends one heartbeat with this JSON body.
    public func send(body: String) {
        guard !request.isBusy else {
            onOutcome(.skipped)
            return
        }
        guard let headers = RequestHeaders.heartbeatLines(configuration: configuration) else {
            onOutcome(.failed("a header value holds a control character"))
            return
        }
        do {
            try request.start(TransferRequest(
                url: configuration.heartbeatURL, headers: headers, body: Array(body.utf8),
                timeout: configuration.timeout, connectTimeout: configuration.connectTimeout, caBundle: caBundle))
        } catch {
            onOutcome(.failed("\(error)"))
        }
    }

    private func finished(_ result: AttemptResult) {
        switch result {
        case let .response(status, _) where (200 ..< 300).contains(status):
            onOutcome(.sent(status: status))
        default:
            onOutcome(.failed(result.failureText))
        }
    }
}

extension ForwarderConfiguration {
    /// `{url}/v1/gateways/{gateway id}/heartbeat`.
    public var heartbeatURL: String { gatewayURL("heartbeat") }
}

extension RequestHeaders {
    /// The events' headers without `Idempotency-Key`; nil when a value is unsafe.
    public static func heartbeatLines(configuration: ForwarderConfiguration) -> [String]? {
        // The events' lines for a placeholder key, that line dropped: one place builds them.
        lines(idempotencyKey: "-", configuration: configuration)?.filter { !$0.hasPrefix("Idempotency-Key:") }
    }
}
