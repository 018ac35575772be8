import HCI

/// Notable happenings, for the log. Rate-limited where a bad controller could flood.
public enum HostLogEvent: Sendable {
    case bringUpStarted
    case commandFamilyChosen(CommandFamily, leFeatures: LEFeatures)
    case bufferSizeFallback(ACLBufferInfo)
    /// An optional bring-up step failed; the host carries on with a default.
    case optionalStepFailed(Opcode, status: HCIStatus?)
    case scanningStarted(ScanTiming, CommandFamily)
    case recovering(RecoveryReason, attempt: Int, wait: Duration, reopeningTransport: Bool)
    /// Logged at the 1st, 2nd, 4th, 8th … occurrence: `count` is the total so far.
    case malformedEvent(HCIDecodingError, count: Int)
    case unmatchedCommandComplete(Opcode, count: Int)
    case clientCommandTimedOut(Opcode)
}
