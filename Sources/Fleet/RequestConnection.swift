import EventLoop

/// One client of a local read-only endpoint (`/metrics`, the status socket), sans-IO: it
/// takes the bytes read and the time, and says what the driver does next.
///
/// A client is not trusted: its request must end (at `terminator`) within `maxRequestBytes`
/// and the whole exchange, answer included, within `timeLimit` of accepting it; past either
/// it is answered with a refusal or cut off. Exactly one request per connection, then close.
public struct RequestConnection: Sendable {
    public struct Limits: Hashable, Sendable {
        /// The request head must end with these bytes (`\r\n\r\n` for HTTP, `\n` for a line).
        public var terminator: [UInt8]
        public var maxRequestBytes: Int
        /// From accept to the last byte of the answer.
        public var timeLimit: Duration

        public init(terminator: [UInt8], maxRequestBytes: Int, timeLimit: Duration) {
            self.terminator = terminator
            self.maxRequestBytes = maxRequestBytes
            self.timeLimit = timeLimit
        }
    }

    public enum Refusal: Hashable, Sendable {
        /// More than `maxRequestBytes` before the terminator.
        case tooLarge
    }

    public enum CloseReason: Hashable, Sendable {
        /// The answer went out whole.
        case answered
        /// The client hung up before its request was complete.
        case hungUp
        /// The time limit passed.
        case timedOut
        /// Reading or writing failed.
        case failed
    }

    public enum Action: Hashable, Sendable {
        /// Wait for more bytes from the client.
        case readMore
        /// The request head is complete (terminator included): answer it with `respond`.
        case answer(head: [UInt8])
        /// The request is refused: answer with the protocol's refusal through `respond`.
        case refuse(Refusal)
        /// Write `unsent` (what is left of the answer) when the socket can take it.
        case write
        /// The answer is out: shut down the sending side and read (discarding) until the
        /// client closes. Closing at once with unread request bytes would make the kernel
        /// reset the connection and the client could lose the answer.
        case finishWriting
        case close(CloseReason)
    }

    public enum Phase: Hashable, Sendable {
        case reading, answering, writing, draining, closed
    }

    public let limits: Limits
    public let deadline: Instant
    public private(set) var phase: Phase = .reading
    private var received: [UInt8] = []
    /// How far `received` was searched for the terminator (so a slow drip stays linear).
    private var searchedUpTo = 0
    public private(set) var unsent: ArraySlice<UInt8> = []

    public init(limits: Limits, acceptedAt now: Instant) {
        self.limits = limits
        deadline = now + limits.timeLimit
    }

    /// Bytes read from the client.
    public mutating func received(_ bytes: some Sequence<UInt8>, at now: Instant) -> Action {
        if phase == .draining { return now >= deadline ? close(.answered) : .readMore }
        guard phase == .reading else { return phase == .closed ? .close(.failed) : .write }
        if now >= deadline { return close(.timedOut) }
        received.append(contentsOf: bytes)
        let terminator = limits.terminator
        let start = max(0, searchedUpTo - terminator.count + 1)
        if let end = Self.find(terminator, in: received, from: start) {
            guard end <= limits.maxRequestBytes else { return refuse(.tooLarge) }
            phase = .answering
            let head = Array(received[..<end])
            received = []
            return .answer(head: head)
        }
        searchedUpTo = received.count
        if received.count >= limits.maxRequestBytes { return refuse(.tooLarge) }
        return .readMore
    }

    /// The client closed its side (read returned 0). Before the request is complete that
    /// ends it; after, too: a closed side stays readable, and polling it until the answer
    /// is out would spin the loop (HTTP clients and `status` never half-close).
    public mutating func hungUp() -> Action {
        close(phase == .draining ? .answered : .hungUp)
    }

    /// The answer (or refusal) to send; then the connection closes.
    public mutating func respond(_ answer: [UInt8]) -> Action {
        guard phase == .answering else { return phase == .closed ? .close(.failed) : .write }
        phase = .writing
        unsent = answer[...]
        return unsent.isEmpty ? finishWriting() : .write
    }

    /// `count` bytes of `unsent` were written.
    public mutating func wrote(_ count: Int, at now: Instant) -> Action {
        guard phase == .writing else { return .close(.failed) }
        unsent = unsent.dropFirst(max(0, count))
        if unsent.isEmpty { return finishWriting() }
        if now >= deadline { return close(.timedOut) }
        return .write
    }

    public mutating func failed() -> Action {
        close(.failed)
    }

    /// The time limit's timer fired (or any time check).
    public mutating func tick(at now: Instant) -> Action? {
        guard phase != .closed, now >= deadline else { return nil }
        return close(phase == .draining ? .answered : .timedOut)
    }

    private mutating func finishWriting() -> Action {
        phase = .draining
        unsent = []
        return .finishWriting
    }

    private mutating func refuse(_ refusal: Refusal) -> Action {
        phase = .answering
        received = []
        return .refuse(refusal)
    }

    private mutating func close(_ reason: CloseReason) -> Action {
        phase = .closed
        received = []
        unsent = []
        return .close(reason)
    }

    /// The index just past the first occurrence of `needle` at or after `from`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = from
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index ..< index + needle.count].elementsEqual(needle) {
                return index + needle.count
            }
            index += 1
        }
        return nil
    }
}
