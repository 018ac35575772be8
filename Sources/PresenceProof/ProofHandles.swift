/// The value handles of the Challenge and Response characteristics on one tag, as
/// discovery found them: cached after a valid proof, so the next handshake is a write and
/// a read (see docs/proof-protocol.md).
public struct ProofHandles: Hashable, Sendable {
    public var challenge: UInt16
    public var response: UInt16
    public init(challenge: UInt16, response: UInt16) {
        self.challenge = challenge
        self.response = response
    }
}
