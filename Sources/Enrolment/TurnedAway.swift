import SecurityManager

/// Why a central was let go while the window stays open.
public enum TurnedAway: Hashable, Sendable {
    /// Its pairing was refused or failed.
    case pairingFailed(PairingFailure)
    /// It sent no Pairing Request within this time of connecting.
    case noPairingRequest(Duration)
    /// It paired, but the identity it handed over was refused.
    case identityRefused(IdentityRefusal)

    /// What the installer reads.
    public var message: String {
        words + "; the window stays open"
    }

    /// Why, without what happens next.
    public var words: String {
        switch self {
        case .pairingFailed(let failure):
            EnrolmentOutcome.words(failure)
        case .noPairingRequest(let time):
            "a central connected and did not start pairing within \(time.components.seconds) s: disconnected"
        case .identityRefused(let refusal):
            refusal.message
        }
    }
}
