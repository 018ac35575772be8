import HCI

/// What happened outside the host: the driver (run loop) reports it.
public enum HostInput: Sendable {
    case transportOpened
    case packetReceived(HCIPacket)
    /// The transport failed or closed; also to be reported when a reopen attempt fails.
    case transportClosed(reason: String)
    /// `nextDeadline` was reached (calling it early or late is harmless).
    case timerFired
}

/// What the driver must do, in order.
public enum HostAction: Sendable {
    case send(HCIPacket)
    case closeTransport
    /// Open the transport again after this wait, then report `.transportOpened` (or
    /// `.transportClosed` if that fails).
    case reopenTransport(after: Duration)
    /// Reports from one event (extended fragments already joined).
    case advertisingReports([LEAdvertisingReport])
    /// Events for the layers above (connections, disconnections, completed packets,
    /// LE events the host itself does not use).
    case event(HCIEvent)
    /// ACL data for the layers above.
    case aclData(HCIPacket)
    /// The end of a command submitted with `submit`.
    case commandFinished(HostCommandResult)
    case stateChanged(HostState)
    case log(HostLogEvent)
}

public enum HostState: Hashable, Sendable {
    /// Waiting for the transport to open for the first time.
    case starting
    /// Resetting and reading the controller.
    case initializing
    case scanning(ControllerInfo)
    case recovering(reason: RecoveryReason, attempt: Int)

    public var isScanning: Bool {
        if case .scanning = self { return true }
        return false
    }
}

/// Why the host is recovering.
public enum RecoveryReason: Hashable, Sendable, CustomStringConvertible {
    case hardwareError(code: UInt8)
    case commandTimeout(Opcode)
    /// The periodic probe went unanswered while scanning.
    case controllerStalled
    /// The controller stopped granting command credits.
    case creditStarvation
    case commandFailed(Opcode, HCIStatus)
    case malformedAnswer(Opcode)
    case transportClosed(String)

    public var description: String {
        switch self {
        case .hardwareError(let code): "hardware error 0x" + String(code, radix: 16)
        case .commandTimeout(let opcode): "command timeout opcode=0x" + String(opcode.rawValue, radix: 16)
        case .controllerStalled: "controller stalled (probe unanswered)"
        case .creditStarvation: "controller granted no command credits"
        case .commandFailed(let opcode, let status): "command 0x" + String(opcode.rawValue, radix: 16) + " failed: \(status)"
        case .malformedAnswer(let opcode): "malformed answer to 0x" + String(opcode.rawValue, radix: 16)
        case .transportClosed(let reason): "transport closed: " + reason
        }
    }
}

/// The outcome of a command a client submitted.
public struct HostCommandResult: Sendable {
    public enum Outcome: Sendable {
        /// Command Complete: status first, then the return parameters.
        case completed(status: HCIStatus, returnParameters: ArraySlice<UInt8>)
        /// Command Status (the outcome proper comes later as an event).
        case status(HCIStatus)
        case timedOut
        /// Dropped unanswered because the controller is being reset.
        case flushed
        case notSent(NotSentReason)
    }

    public enum NotSentReason: Hashable, Sendable {
        /// Only while scanning does the host take commands from clients.
        case controllerNotReady
        /// A command of the other advertising/scanning family: never mixed.
        case wrongCommandFamily(CommandFamily)
    }

    public var token: UInt64
    public var opcode: Opcode
    public var outcome: Outcome
}

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

public struct HostCounters: Hashable, Sendable {
    public var packetsReceived = 0
    public var malformedEvents = 0
    public var unknownEvents = 0
    public var unmatchedCommandCompletes = 0
    public var commandTimeouts = 0
    public var hardwareErrors = 0
    public var recoveries = 0
    public var transportCloses = 0
    public var probesSent = 0
    public var advertisingReports = 0
    public var commandsSent = 0
    public init() {}
}
