import AttendanceEvents
import EventLoop
import HCI

/// What the presence engine tells the agent.
public enum PresenceEvent: Hashable, Sendable {
    /// A visit starts: store and send a `checkin` event.
    case checkin(PresenceDecision)
    /// A visit ends: store and send a `checkout` event.
    case checkout(PresenceDecision)
    /// For the log only.
    case stateChanged(personId: String, from: PresenceState, to: PresenceState, at: Instant)
    /// The person's signal says PRESENT but they require a proof and have no valid one;
    /// reported once per attempt (until they check in or leave NEARBY), so the agent can
    /// log why nobody checked in.
    case waitingForProof(personId: String, reason: ProofWaitReason)
}

public enum ProofWaitReason: Hashable, Sendable, CustomStringConvertible {
    /// No proof yet, or the last one is older than `proof_ttl_s`.
    case noValidProof
    /// Every tag of the person is locked out after failed proofs.
    case lockedOut

    public var description: String {
        switch self {
        case .noValidProof: "no valid proof yet"
        case .lockedOut: "tag locked out after failed proofs"
        }
    }
}

/// Everything an attendance event needs from the engine (see docs/event-api.md).
public struct PresenceDecision: Hashable, Sendable {
    public var personId: String
    /// The tag whose signal decided.
    public var tagId: String
    public var tagIndex: Int
    /// That tag's last advertising address and type.
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// checkin: the transition to PRESENT; checkout: when UNCONFIRMED began.
    public var timestamp: Instant
    /// When the engine decided (checkin: equal to `timestamp`; checkout: the leave timer).
    public var decidedAt: Instant
    /// The visit's start: the checkin's `timestamp`.
    public var visitStart: Instant
    /// The same three times in wall-clock milliseconds, through the engine's mapping.
    public var timestampWallMilliseconds: Int64
    public var decidedAtWallMilliseconds: Int64
    public var visitStartWallMilliseconds: Int64
    /// The deciding tag's samples in the deciding window, oldest first (checkout: the
    /// window when UNCONFIRMED began — empty when it began because the tag went silent,
    /// or when the visit came through a restart or a link loss).
    public var rssiSeries: [Int]
    /// Last TX power the tag advertised, if any.
    public var txPower: Int?
    /// The proof the checkin relied on; nil when the person needs no proof.
    public var handshake: AttendanceEvent.Handshake?
    /// A checkout because a neighbouring door took the person: its gateway id
    /// (docs/neighbours.md); nil otherwise.
    public var movedTo: String? = nil
}
