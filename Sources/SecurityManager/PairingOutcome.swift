import BluetoothCrypto
import EventLoop
import HCI

/// How the two sides authenticated (Core Vol 3 Part H §2.3.5.1).
public enum PairingMethod: String, Hashable, Sendable {
    case justWorks = "just-works"
    case numericComparison = "numeric-comparison"
}

/// The identity a peer distributed (Identity Information and Identity Address
/// Information). The description shows the address, never the key.
public struct PeerIdentity: Hashable, Sendable {
    /// Nil when the peer sent an all-zero IRK: it has none (it does not use resolvable
    /// private addresses).
    public var irk: SecretKey128?
    /// A public or static random address.
    public var address: BluetoothAddress
    public var isRandom: Bool

    public init(irk: SecretKey128?, address: BluetoothAddress, isRandom: Bool) {
        self.irk = irk
        self.address = address
        self.isRandom = isRandom
    }
}

/// A completed pairing: what the peer gave. The LTK is not part of it (it encrypted this
/// link; nothing keeps it).
public struct PairingResult: Hashable, Sendable {
    public var method: PairingMethod
    /// Nil when the peer distributed no identity key.
    public var peerIdentity: PeerIdentity?

    public init(method: PairingMethod, peerIdentity: PeerIdentity?) {
        self.method = method
        self.peerIdentity = peerIdentity
    }
}

/// Why we sent Pairing Failed; `reason` is the octet that went to the peer.
public enum PairingRefusal: Hashable, Sendable {
    /// We are not pairing (no enrolment window): Pairing Not Supported.
    case pairingNotAccepted
    /// No Secure Connections bit: legacy pairing is refused (Authentication Requirements).
    case legacyPairing
    /// A maximum key size below 16 octets.
    case encryptionKeyTooShort(UInt8)
    /// The peer claims our out-of-band data; we never give any.
    case outOfBandRequested
    /// A public key off the curve (DHKey Check Failed).
    case invalidPublicKey
    /// The peer sent our own public key back.
    case reflectedPublicKey
    /// The peer's DHKey check value was wrong.
    case dhKeyCheckMismatch
    /// The person comparing said the six digits differ.
    case numericValueRejected
    /// A command at the wrong step of the pairing (Unspecified Reason).
    case unexpected(SMPCode)
    /// A wrong length or a field value the specification does not allow (Invalid Parameters);
    /// nil for an empty PDU.
    case invalidParameters(SMPCode?)
    /// A reserved code, or one only an initiator or a peripheral sends (Command Not Supported).
    case unsupported(SMPCode)
    /// A second pairing on a link where one already ended (Repeated Attempts).
    case repeatedAttempt
    /// libcrypto could not make a key pair (Unspecified Reason).
    case noKeyPair

    public var reason: PairingFailedReason {
        switch self {
        case .pairingNotAccepted: .pairingNotSupported
        case .legacyPairing: .authenticationRequirements
        case .encryptionKeyTooShort: .encryptionKeySize
        case .outOfBandRequested: .oobNotAvailable
        case .invalidPublicKey, .dhKeyCheckMismatch: .dhKeyCheckFailed
        case .numericValueRejected: .numericComparisonFailed
        case .reflectedPublicKey, .unexpected, .noKeyPair: .unspecifiedReason
        case .invalidParameters: .invalidParameters
        case .unsupported: .commandNotSupported
        case .repeatedAttempt: .repeatedAttempts
        }
    }
}

/// How a pairing ended without keys.
public enum PairingFailure: Hashable, Sendable {
    /// We sent Pairing Failed.
    case refused(PairingRefusal)
    /// The peer sent Pairing Failed with this reason.
    case peerFailed(PairingFailedReason)
    /// The SMP timer ran out (30 s since our last SMP command): nothing more goes over SMP
    /// on this link.
    case timedOut
    /// The controller could not encrypt the link with the LTK: an error status, or
    /// success with encryption off.
    case encryptionFailed(HCIStatus, enabled: Bool)
    /// The link closed before the pairing completed (e.g. before the peer's identity key).
    case linkClosed
}

/// What the responder asks its driver to do, in order.
public enum PairingAction: Hashable, Sendable {
    /// An SMP PDU for the peer, on L2CAP channel 0x0006 of this connection.
    case send([UInt8])
    /// HCI LE Long Term Key Request Reply with this key.
    case replyLongTermKey(SecretKey128)
    /// HCI LE Long Term Key Request Negative Reply.
    case rejectLongTermKeyRequest
    /// Numeric Comparison: show this six-digit value and report the person's yes or no
    /// with `numericComparisonAnswered(matches:now:)`.
    case compareNumericValue(UInt32)
    /// The pairing completed; the peer's keys.
    case paired(PairingResult)
    case failed(PairingFailure)
    /// Call `timerFired(now:)` at this instant; nil: the timer is stopped.
    case armTimer(Instant?)
}
