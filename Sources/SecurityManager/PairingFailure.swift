import HCI

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
    /// The window asks for Numeric Comparison and the phone has neither a display with
    /// yes/no nor a keyboard with a display (Authentication Requirements): it is refused,
    /// never paired by Just Works instead.
    case cannotCompareDigits(IOCapability)
    /// A public key off the curve (DHKey Check Failed).
    case invalidPublicKey
    /// The peer sent our own public key back.
    case reflectedPublicKey
    /// The peer sent the specification's debug public key, whose private key is public:
    /// anyone listening could derive the link's key (Unspecified Reason).
    case debugPublicKey
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
        case .legacyPairing, .cannotCompareDigits: .authenticationRequirements
        case .encryptionKeyTooShort: .encryptionKeySize
        case .outOfBandRequested: .oobNotAvailable
        case .invalidPublicKey, .dhKeyCheckMismatch: .dhKeyCheckFailed
        case .numericValueRejected: .numericComparisonFailed
        case .reflectedPublicKey, .debugPublicKey, .unexpected, .noKeyPair: .unspecifiedReason
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
