import BluetoothCrypto
import EventLoop

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
