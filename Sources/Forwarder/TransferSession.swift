/// One POST (or GET) to send.
struct TransferRequest {
    var url: String
    var headers: [String]
    var body: [UInt8]
    var timeout: Duration
    var connectTimeout: Duration
    /// Extra trusted CAs (PEM, the system bundle included), or `nil` for the defaults.
    var caBundle: [UInt8]?
    /// A GET (the body is ignored) instead of a POST.
    var isGet = false
    /// Keep the answer's body and ETag, up to this many bytes (more fails the transfer);
    /// nil drops the body unread.
    var answerLimit: Int? = nil
}

/// A finished transfer: the id `start` returned and how the attempt ended.
typealias TransferCompletion = (id: UInt64, result: AttemptResult)

/// The body and ETag of an answer whose request asked to keep them.
struct ReceivedAnswer: Equatable {
    var etag: String?
    var body: [UInt8]
}

/// What the forwarder needs of an HTTP client on the loop: start POSTs, hear how they
/// ended, abandon them. libcurl's multi interface (`HTTPTransfers`) is the one real
/// implementation; the seam is here so the forwarder's decisions (backoff, Retry-After,
/// store outages, the in-flight cap) are tested against a scripted server on a
/// `VirtualEventLoop`, without sockets or sleeping.
protocol TransferSession: AnyObject {
    /// Called on the loop with every batch of finished transfers, so the caller can
    /// record them in one store transaction. Never called from inside `start`.
    var onCompletions: ([TransferCompletion]) -> Void { get set }
    /// Called, before `onCompletions`, with the kept answer of each finished transfer
    /// whose request had an `answerLimit` and that got a response.
    var onAnswer: (UInt64, ReceivedAnswer) -> Void { get set }
    /// Starts a POST (or a GET); its result comes through `onCompletions`.
    func start(_ request: TransferRequest) throws(ForwarderError) -> UInt64
    /// Abandons every transfer (no completion is reported for them).
    func cancelAll()
    /// At most this many connections to the server at once.
    func setMaxConnections(_ count: Int)
}
