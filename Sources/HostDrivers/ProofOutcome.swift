import EventLoop
import PresenceProof

/// The result of one handshake (see docs/proof-protocol.md), for the proof book, the log, events and
/// `beacon-gateway prove`.
public struct ProofOutcome: Sendable, CustomStringConvertible {
    public struct Timings: Hashable, Sendable {
        /// From the connect request to LE Connection Complete, when the caller knew it.
        public var connect: Duration?
        /// Service and characteristic discovery; zero when cached handles were used.
        public var discovery: Duration = .zero
        public var write: Duration = .zero
        public var read: Duration = .zero
        public var verify: Duration = .zero
    }

    public var tag: String
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
    public var finishedAt: Instant

    public var ok: Bool { failure == nil }

    public var description: String {
        var text = "tag=\(tag) ok=\(ok) rt=\(roundTripMilliseconds)ms att=\(attRoundTrips) cache=\(usedCachedHandles)"
        if let failure { text += " failure=\(failure.name) detail=\"\(failure)\"" }
        return text
    }
}
