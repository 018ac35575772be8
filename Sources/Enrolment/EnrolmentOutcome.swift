import SecurityManager

/// How an enrolment window ended (SPEC §15 exit codes: 0 for `.enrolled`, 1 otherwise).
public enum EnrolmentOutcome: Hashable, Sendable {
    /// A phone paired and gave its identity (IRK and/or identity address).
    case enrolled(method: PairingMethod, identity: PeerIdentity)
    /// A phone paired but distributed no identity key.
    case pairedWithoutIdentity(PairingMethod)
    /// The pairing that started failed.
    case failed(PairingFailure)
    /// The window ran out with nobody enrolled; why the last phone turned away failed, if one did.
    case windowEnded(lastFailure: TurnedAway?)
    /// The window was closed before its end, for this reason (in words).
    case ended(String)

    /// What the installer reads.
    public var message: String {
        switch self {
        case .enrolled: "enrolled"
        case .pairedWithoutIdentity: "the phone paired but gave no identity key (no IRK received)"
        case .windowEnded(nil): "the window ended without a phone pairing"
        case .windowEnded(let failure?): "the window ended without a phone pairing; the last one: " + failure.words
        case .ended(let reason): reason
        case .failed(let failure): Self.words(failure)
        }
    }

    static func words(_ failure: PairingFailure) -> String {
        switch failure {
        case .refused(.legacyPairing):
            "the phone offered only legacy pairing: it is too old (LE Secure Connections is required)"
        case .refused(.numericValueRejected):
            "the numeric value was not confirmed"
        case .refused(.debugPublicKey):
            "refused: the phone used the Bluetooth specification's debug key, with which anyone nearby could read "
                + "the pairing (a test device or tool, not an ordinary phone)"
        case .refused(.cannotCompareDigits(let capability)):
            "refused: the phone cannot compare six digits (it says it has \(capability.words)), and this window "
                + "pairs only by comparing them; nothing was paired. Enrol from a phone with a screen, or, knowing that "
                + "then any device in range could enrol in its place, run enroll again with --yes (Just Works)"
        case .refused(let refusal):
            "pairing refused (reason 0x" + String(refusal.reason.rawValue, radix: 16) + ")"
        case .peerFailed(let reason):
            "refused by the phone (reason 0x" + String(reason.rawValue, radix: 16) + ")"
        case .timedOut:
            "the pairing timed out"
        case .encryptionFailed(let status, _):
            "the link could not be encrypted (\(status))"
        case .linkClosed:
            "the phone left before giving its identity key (no IRK received)"
        }
    }
}
