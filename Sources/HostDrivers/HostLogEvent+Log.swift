import Host
import Journal

extension LogSink {
    /// The host layer's notable happenings as log lines.
    public func log(_ event: HostLogEvent) {
        switch event {
        case .bringUpStarted:
            log(.debug, "controller bring-up started")
        case let .commandFamilyChosen(family, features):
            log(.info, "controller commands chosen", ["family": family.description, "le_features": "0x" + String(features.rawValue, radix: 16)])
        case let .bufferSizeFallback(buffer):
            log(.info, "controller has no LE buffers, using the shared ACL pool", ["length": "\(buffer.packetLength)", "count": "\(buffer.packetCount)"])
        case let .optionalStepFailed(opcode, status):
            log(.notice, "optional controller step failed, using a default", ["opcode": opcode.description, "status": status.map { "\($0)" } ?? "no answer"])
        case let .scanningStarted(timing, family):
            log(.info, "scanning", ["family": family.description, "interval_ms": format(timing.intervalMilliseconds), "window_ms": format(timing.windowMilliseconds)])
        case let .recovering(reason, attempt, wait, reopening):
            log(.warning, "controller down, recovering", ["reason": reason.description, "attempt": "\(attempt)", "wait_ms": "\(wait.nanosecondsClamped / 1_000_000)", "reopen": reopening ? "yes" : "no"])
        case let .malformedEvent(error, count):
            log(.warning, "malformed HCI event dropped", ["error": "\(error)", "count": "\(count)"])
        case let .unmatchedCommandComplete(opcode, count):
            log(.notice, "answer to a command not sent, ignored", ["opcode": opcode.description, "count": "\(count)"])
        case let .clientCommandTimedOut(opcode):
            log(.warning, "controller did not answer a command", ["opcode": opcode.description])
        }
    }

    private func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths % 10))"
    }
}
