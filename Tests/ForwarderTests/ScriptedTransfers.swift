import EventLoop
@testable import Forwarder

/// The forwarder's transfer layer played by the test, on a `VirtualEventLoop`: each POST
/// is recorded with the virtual time it was started at and answered `latency` later, on
/// the loop (as libcurl's completions arrive), with what `answer` says for it.
final class ScriptedTransfers: TransferSession {
    struct Sent {
        var request: LoopbackServer.Request
        /// When the forwarder started the POST.
        var at: Instant
    }

    private let loop: EventLoop
    var latency: Duration
    /// The outcome of the `index`-th POST (counting from 0).
    var answer: (_ index: Int, _ request: LoopbackServer.Request) -> AttemptResult
    /// The body and ETag the server sends with the `index`-th request's response, kept
    /// (as libcurl keeps them) when that request has an `answerLimit`.
    var keptAnswer: (_ index: Int) -> ReceivedAnswer = { _ in ReceivedAnswer(etag: nil, body: []) }
    var onCompletions: ([TransferCompletion]) -> Void = { _ in }
    var onAnswer: (UInt64, ReceivedAnswer) -> Void = { _, _ in }
    /// When set, `start` throws it, as libcurl refusing a new handle would.
    var refusal: ForwarderError?
    private(set) var sent: [Sent] = []
    private var inFlight: [UInt64: EventLoop.TimerHandle] = [:]
    private var nextID: UInt64 = 1
    /// The most POSTs that were in flight at once.
    private(set) var peakInFlight = 0

    init(loop: EventLoop, latency: Duration = .milliseconds(40),
         answer: @escaping (_ index: Int, _ request: LoopbackServer.Request) -> AttemptResult) {
        self.loop = loop
        self.latency = latency
        self.answer = answer
    }

    var inFlightCount: Int { inFlight.count }

    func start(_ request: TransferRequest) throws(ForwarderError) -> UInt64 {
        if let refusal { throw refusal }
        let id = nextID
        nextID += 1
        let key = request.headers.first { $0.hasPrefix("Idempotency-Key: ") }.map { String($0.dropFirst(17)) } ?? ""
        let parsed = LoopbackServer.Request(key: key, body: request.body)
        let index = sent.count
        sent.append(Sent(request: parsed, at: loop.now))
        let result = answer(index, parsed)
        let kept = request.answerLimit != nil && result.isResponse ? keptAnswer(index) : nil
        inFlight[id] = loop.schedule(after: latency) { [unowned self] in
            inFlight[id] = nil
            if let kept { onAnswer(id, kept) }
            onCompletions([(id, result)])
        }
        peakInFlight = max(peakInFlight, inFlight.count)
        return id
    }

    func cancelAll() {
        for timer in inFlight.values { loop.cancel(timer) }
        inFlight.removeAll()
    }

    func setMaxConnections(_ count: Int) {}
}

extension AttemptResult {
    static func status(_ status: Int, retryAfter: String? = nil) -> AttemptResult {
        .response(status: status, retryAfter: retryAfter)
    }

    var isResponse: Bool {
        if case .response = self { true } else { false }
    }
}
