import Store

/// How one HTTP attempt ended, as the transfer layer saw it.
public enum AttemptResult: Hashable, Sendable {
    /// The server answered with a status (and maybe `Retry-After`).
    case response(status: Int, retryAfter: String?)
    /// No answer: the request failed below HTTP.
    case failure(TransportFailure)

    /// How the attempt reads when its owner counts it a failed request (the heartbeat's and
    /// the roster fetch's `failed` outcomes): its status, or libcurl's words.
    var failureText: String {
        switch self {
        case let .response(status, _): "HTTP \(status)"
        case let .failure(failure): failure.message
        }
    }
}

/// A failure below HTTP, sorted into what an operator can act on.
public struct TransportFailure: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case timeout
        case connect
        case tls
        case network
        case protocolError
    }

    public var kind: Kind
    /// libcurl's words (with its error buffer), for logs and `outbox list`.
    public var message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    var errorClass: DeliveryErrorClass {
        switch kind {
        case .timeout: .timeout
        case .connect, .network: .network
        case .tls: .tls
        case .protocolError: .protocolError
        }
    }
}

/// What the outbox does with an event after an attempt (see docs/event-api.md).
public enum DeliveryDecision: Hashable, Sendable {
    /// 201 stored, 200 duplicate: done.
    case sent(status: Int)
    /// 409: refused by server policy; kept as rejected, never retried.
    case rejected(status: Int)
    /// Another 4xx (not 401/403/408/429): a dead letter until `outbox retry-dead`.
    case dead(status: Int)
    /// Try again later. `retryAfter` is the server's `Retry-After`, if any; `long` asks for
    /// the longest backoff (the server refuses our credentials: hammering it is useless).
    case retry(DeliveryErrorClass, message: String, retryAfter: String?, long: Bool)

    /// Classifies an attempt exactly as docs/event-api.md says.
    ///
    /// Answers docs/event-api.md does not name (1xx, other 2xx, 3xx, ≥ 600) are retried as protocol
    /// errors: a redirect to a login page or a proxy's odd answer must not lose an event,
    /// and a server that never stored it must not make us forget it.
    public static func classify(_ result: AttemptResult) -> DeliveryDecision {
        switch result {
        case let .failure(failure):
            return .retry(failure.errorClass, message: failure.message, retryAfter: nil, long: false)
        case let .response(status, retryAfter):
            switch status {
            case 200, 201:
                return .sent(status: status)
            case 409:
                return .rejected(status: status)
            case 401, 403:
                return .retry(.auth, message: "HTTP \(status): the server refuses the gateway's token", retryAfter: retryAfter, long: true)
            case 408, 429:
                return .retry(.throttled, message: "HTTP \(status)", retryAfter: retryAfter, long: false)
            case 400 ... 499:
                return .dead(status: status)
            case 500 ... 599:
                return .retry(.server, message: "HTTP \(status)", retryAfter: retryAfter, long: false)
            default:
                return .retry(.protocolError, message: "HTTP \(status): not an answer the event API defines (docs/event-api.md)", retryAfter: retryAfter, long: false)
            }
        }
    }
}
