/// The result of one proof handshake (see docs/proof-protocol.md), as the proof runner
/// reports it: for the door core (the proof book, presence, the log, events) and for
/// `beacon-gateway prove`, which prints the timings. When it finished is told beside it.
public struct ProofOutcome: Sendable, CustomStringConvertible {
    /// Where the handshake's time went, as `beacon-gateway prove` prints it.
    public struct Timings: Hashable, Sendable {
        /// From the connect request to LE Connection Complete, when the caller knew it.
        public var connect: Duration?
        /// Service and characteristic discovery; zero when cached handles were used.
        public var discovery: Duration
        public var write: Duration
        public var read: Duration
        public var verify: Duration

        public init(connect: Duration? = nil, discovery: Duration = .zero, write: Duration = .zero, read: Duration = .zero,
                    verify: Duration = .zero) {
            self.connect = connect
            self.discovery = discovery
            self.write = write
            self.read = read
            self.verify = verify
        }
    }

    public var tagId: String
    public var connectionHandle: UInt16
    /// nil when the proof is valid.
    public var failure: ProofFailure?
    /// From the start of the handshake on the connection to the verdict.
    public var roundTripMilliseconds: Int
    public var timings: Timings
    /// ATT requests sent: 2 with cached handles (write, read).
    public var attRoundTrips: Int
    /// The value handles, for the proof book's cache: set only when the proof is valid.
    public var handles: ProofHandles?
    public var usedCachedHandles: Bool

    public var ok: Bool { failure == nil }

    public init(tagId: String, connectionHandle: UInt16, failure: ProofFailure?, roundTripMilliseconds: Int,
                timings: Timings = Timings(), attRoundTrips: Int, handles: ProofHandles?, usedCachedHandles: Bool) {
        self.tagId = tagId
        self.connectionHandle = connectionHandle
        self.failure = failure
        self.roundTripMilliseconds = roundTripMilliseconds
        self.timings = timings
        self.attRoundTrips = attRoundTrips
        self.handles = handles
        self.usedCachedHandles = usedCachedHandles
    }

    public var description: String {
        var text = "tag=\(tagId) ok=\(ok) rt=\(roundTripMilliseconds)ms att=\(attRoundTrips) cache=\(usedCachedHandles)"
        if let failure { text += " failure=\(failure.name) detail=\"\(failure)\"" }
        return text
    }
}
