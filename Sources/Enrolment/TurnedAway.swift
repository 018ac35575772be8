import SecurityManager

/// Why a central was let go while the window stays open.
public enum TurnedAway: Hashable, Sendable {
    /// Its pairing was refused or failed.
    case pairingFailed(PairingFailure)
    /// It sent no Pairing Request within this time of connecting.
    case noPairingRequest(Duration)

    /// What the installer reads.
    public var message: String {
        switch self {
        case .pairingFailed(let failure):
            EnrolmentOutcome.words(failure) + "; the window stays open"
        case .noPairingRequest(let time):
            "a central connected and did not start pairing within \(time.components.seconds) s: disconnected; "
                + "the window stays open"
        }
    }
}
