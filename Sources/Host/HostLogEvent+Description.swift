import HCI

extension HostLogEvent: CustomStringConvertible {
    /// One key=value line per event, as the journal wants them (see docs/logs-and-systemd.md).
    public var description: String {
        switch self {
        case .bringUpStarted:
            "controller reset"
        case .commandFamilyChosen(let family, let features):
            "controller commands family=\(family) le_features=0x" + String(features.rawValue, radix: 16)
        case .bufferSizeFallback(let buffer):
            "controller le_buffer shared=true length=\(buffer.packetLength) count=\(buffer.packetCount)"
        case .optionalStepFailed(let opcode, let status):
            "controller optional_step_failed opcode=0x" + String(opcode.rawValue, radix: 16)
                + " status=" + (status.map { "\($0)" } ?? "no-answer")
        case .scanningStarted(let timing, let family):
            "controller up scanning family=\(family) interval_ms=\(timing.intervalMilliseconds) window_ms=\(timing.windowMilliseconds)"
        case .recovering(let reason, let attempt, let wait, let reopening):
            "controller down reason=\"\(reason)\" attempt=\(attempt) retry_in_s=\(wait.secondsDouble) reopen_transport=\(reopening)"
        case .malformedEvent(let error, let count):
            "hci malformed_event count=\(count) error=\"\(error)\""
        case .unmatchedCommandComplete(let opcode, let count):
            "hci unmatched_command_complete opcode=0x" + String(opcode.rawValue, radix: 16) + " count=\(count)"
        case .clientCommandTimedOut(let opcode):
            "hci command_timeout opcode=0x" + String(opcode.rawValue, radix: 16)
        }
    }
}
