import EventLoop
import Fleet

/// Asks the server for this gateway's roster (see docs/fleet.md):
/// `GET {url}/v1/gateways/{id}/roster` with the events' `Authorization` and
/// `If-None-Match`, through libcurl on the loop, on its own transfer set and connection
/// like the heartbeat: a slow server never holds an event back. At most one request in
/// flight; the answer's body is kept up to a limit.
public final class RosterFetcher {
    public private(set) var configuration: ForwarderConfiguration
    private let request: SingleRequestDriver
    private let answerLimit: Int
    private var caBundle: [UInt8]?
    private let onOutcome: (RosterAnswer) -> Void

    public init(loop: EventLoop, configuration: ForwarderConfiguration, answerLimit: Int,
                onOutcome: @escaping (RosterAnswer) -> Void) throws(ForwarderError) {
        self.configuration = configuration
        self.answerLimit = answerLimit
        self.onOutcome = onOutcome
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        request = SingleRequestDriver(transfers: try HTTPTransfers(loop: loop, maxConnections: 1))
        request.onFinished = { [unowned self] result, answer in self.finished(result, answer: answer) }
    }

    public var isFetching: Bool { request.isBusy }

    /// New settings (SIGHUP); a request in flight finishes with the old ones.
    public func reload(_ configuration: ForwarderConfiguration) throws(ForwarderError) {
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        self.configuration = configuration
    }

    public func stop() {
        request.cancel()
    }

    /// Sends one request; its outcome comes through `onOutcome` (later, never from here
    /// unless the request could not even start).
    public func fetch(ifNoneMatch etag: String?) {
        guard !request.isBusy else { return }
        guard var headers = RequestHeaders.rosterLines(configuration: configuration) else {
            onOutcome(.failed("a header value holds a control character"))
            return
        }
        // An ETag we could not send safely is not sent: the server then answers in full.
        if let etag, RequestHeaders.isSafe(etag), !etag.isEmpty { headers.append("If-None-Match: \(etag)") }
        do {
            try request.start(TransferRequest(
                url: configuration.rosterURL, headers: headers, body: [],
                timeout: configuration.timeout, connectTimeout: configuration.connectTimeout, caBundle: caBundle,
                isGet: true, answerLimit: answerLimit))
        } catch {
            onOutcome(.failed("\(error)"))
        }
    }

    private func finished(_ result: AttemptResult, answer: ReceivedAnswer?) {
        switch result {
        case .response(200, _):
            onOutcome(.roster(etag: answer?.etag, body: answer?.body ?? []))
        case .response(304, _):
            onOutcome(.notModified)
        default:
            onOutcome(.failed(result.failureText))
        }
    }
}

extension ForwarderConfiguration {
    /// `{url}/v1/gateways/{gateway id}/roster`.
    public var rosterURL: String { gatewayURL("roster") }

    /// `{url}/v1/gateways/{gateway id}/{name}`. The id needs no escaping: letters,
    /// digits and `. _ - : @` are all allowed in a path segment.
    func gatewayURL(_ name: String) -> String {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/v1/gateways/" + deviceId + "/" + name
    }
}

extension RequestHeaders {
    /// The heartbeat's headers without `Content-Type` (a GET has no body).
    public static func rosterLines(configuration: ForwarderConfiguration) -> [String]? {
        heartbeatLines(configuration: configuration)?.filter { !$0.hasPrefix("Content-Type:") }
    }
}
