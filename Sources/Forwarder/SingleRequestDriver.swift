/// At most one request in flight on its own transfer session, for the gateway's requests
/// beside the events (the heartbeat and the roster, see docs/fleet.md): its owner decides
/// what to send and what an answer means, this matches the session's callbacks to the one
/// request it started and hands the finished transfer back. A transfer it did not start,
/// or one started before `cancel`, is never reported.
final class SingleRequestDriver {
    private let transfers: any TransferSession
    private var inFlight: UInt64?
    /// The answer kept for the request in flight; it arrives before its completion.
    private var answer: ReceivedAnswer?
    /// Called on the loop, never from inside `start`, with how the request ended and the
    /// answer kept for it (nil unless the request had an `answerLimit` and got a response).
    var onFinished: (AttemptResult, ReceivedAnswer?) -> Void = { _, _ in }

    /// - Parameter transfers: used by this driver alone (it takes both callbacks).
    init(transfers: any TransferSession) {
        self.transfers = transfers
        transfers.onAnswer = { [unowned self] id, answer in if id == self.inFlight { self.answer = answer } }
        transfers.onCompletions = { [unowned self] completions in self.finished(completions) }
    }

    deinit {
        transfers.cancelAll()
    }

    /// A request is in flight; `start` must wait until it has finished.
    var isBusy: Bool { inFlight != nil }

    /// Starts `request`; only when not busy. Throws when it could not even start, and then
    /// `onFinished` is not called for it.
    func start(_ request: TransferRequest) throws(ForwarderError) {
        precondition(inFlight == nil, "one request at a time")
        inFlight = try transfers.start(request)
    }

    /// Abandons the request in flight without reporting it.
    func cancel() {
        transfers.cancelAll()
        inFlight = nil
        answer = nil
    }

    private func finished(_ completions: [TransferCompletion]) {
        for (id, result) in completions where id == inFlight {
            inFlight = nil
            let kept = answer
            answer = nil
            onFinished(result, kept)
        }
    }
}
