import EventLoop
import HCI

/// The host layer as a sans-IO state machine: controller bring-up, command flow,
/// continuous scanning, health probes and recovery.
///
/// Each input (`handle(_:now:)`) returns the actions the driver performs, in order;
/// time only ever comes in as `now`. The driver calls `handle(.timerFired, now:)` at
/// `nextDeadline`.
///
/// Life cycle: `.transportOpened` → Reset and the reads of bring-up → scan parameters
/// and enable → scanning, with a cheap command every `probeInterval` as a health probe.
/// A Hardware Error event, a command timeout (including an unanswered probe) or a
/// failed mandatory step tears down locally (queued commands dropped, clients told)
/// and re-runs Reset after a growing backoff; a closed transport is reopened after
/// the same backoff; several failed resets in a row reopen the transport too.
public struct HostController: Sendable {
    public let configuration: HostConfiguration
    public internal(set) var counters = HostCounters()
    public internal(set) var state: HostState = .starting

    var phase: Phase = .closed
    var flow: HCICommandFlow
    var reassembler: ExtendedReportReassembler
    /// Recoveries since scanning last started: drives the backoff.
    var failedAttempts = 0
    /// Resets tried since the transport was last (re)opened without reaching scanning.
    var resetsSinceOpen = 0
    var nextProbeAt: Instant?
    var probeOutstanding = false
    /// A client asked for scanning to be off (see `setScanningPaused(_:now:)`).
    var scanPauseRequested = false

    enum Phase {
        /// The transport is not open: before the first open, or waiting for a reopen.
        case closed
        case bringUp(BringUp)
        case startingScan(ControllerInfo, ScanStep)
        case scanning(ControllerInfo)
        /// Transport open, waiting out the backoff before the next Reset.
        case waitingToReset(until: Instant)
    }

    enum ScanStep { case parameters, enable }

    public init(configuration: HostConfiguration = HostConfiguration()) {
        self.configuration = configuration
        flow = HCICommandFlow(timeout: configuration.commandTimeout)
        reassembler = ExtendedReportReassembler(limits: configuration.reassembly)
    }

    /// What bring-up found; `nil` until scanning.
    public var controllerInfo: ControllerInfo? {
        if case .scanning(let info) = phase { return info }
        return nil
    }

    /// True while scanning with the controller answering its probes: the watchdog
    /// is fed only then.
    public var isControllerAnswering: Bool {
        if case .scanning = phase { return true }
        return false
    }

    public var reassemblyCounters: ExtendedReportReassembler.Counters { reassembler.counters }

    /// When the driver must next call `handle(.timerFired, now:)`.
    public var nextDeadline: Instant? {
        var deadlines = [Instant]()
        if let deadline = flow.nextDeadline { deadlines.append(deadline) }
        switch phase {
        case .waitingToReset(let until): deadlines.append(until)
        case .scanning: if !probeOutstanding, let probe = nextProbeAt { deadlines.append(probe) }
        default: break
        }
        return deadlines.min()
    }

    // MARK: Inputs

    public mutating func handle(_ input: HostInput, now: Instant) -> [HostAction] {
        var actions = [HostAction]()
        handle(input, now: now, into: &actions)
        return actions
    }

    /// As `handle(_:now:)`, appending to a buffer the caller reuses (the hot path).
    public mutating func handle(_ input: HostInput, now: Instant, into actions: inout [HostAction]) {
        switch input {
        case .transportOpened:
            _ = flushCommands(into: &actions)
            reassembler.reset()
            resetsSinceOpen = 0
            startBringUp(now: now, into: &actions)
        case .packetReceived(let packet):
            receive(packet, now: now, into: &actions)
        case .transportClosed(let reason):
            counters.transportCloses += 1
            beginRecovery(.transportClosed(reason), now: now, transportClosed: true, into: &actions)
        case .timerFired:
            break
        }
        processTimers(now: now, into: &actions)
        pump(now: now, into: &actions)
    }

    /// Sends a client's command (connections, filter accept list, advertising) through
    /// the same command flow. Its end comes back as `.commandFinished` with `token`.
    ///
    /// Taken only while scanning, and only in the controller's command family. With
    /// `recoverOnTimeout` false, an unanswered command is reported as timed out without
    /// resetting the controller (for commands some controllers silently ignore, like
    /// Bumble's Read RSSI).
    public mutating func submit<Command: HCICommand>(
        _ command: Command, token: UInt64, now: Instant, recoverOnTimeout: Bool = true
    ) -> [HostAction] {
        submit(packet: command.packet, opcode: Command.opcode, token: token, now: now, recoverOnTimeout: recoverOnTimeout)
    }

    /// As `submit(_:token:now:recoverOnTimeout:)` for an already encoded command packet.
    public mutating func submit(
        packet: HCIPacket, opcode: Opcode, token: UInt64, now: Instant, recoverOnTimeout: Bool = true
    ) -> [HostAction] {
        guard case .scanning(let info) = phase else {
            return [.commandFinished(HostCommandResult(token: token, opcode: opcode, outcome: .notSent(.controllerNotReady)))]
        }
        guard info.commandFamily.allows(opcode) else {
            return [.commandFinished(HostCommandResult(
                token: token, opcode: opcode, outcome: .notSent(.wrongCommandFamily(info.commandFamily))
            ))]
        }
        flow.enqueue(packet, opcode: opcode, origin: .client(token: token, recoverOnTimeout: recoverOnTimeout))
        var actions = [HostAction]()
        pump(now: now, into: &actions)
        return actions
    }

    // MARK: Packets

    private mutating func receive(_ packet: HCIPacket, now: Instant, into actions: inout [HostAction]) {
        counters.packetsReceived += 1
        switch packet.type {
        case .event: break
        case .acl:
            actions.append(.aclData(packet))
            return
        default:
            counters.unknownEvents += 1
            return
        }
        let event: HCIEvent
        do {
            event = try HCIEvent(packet)
        } catch {
            counters.malformedEvents += 1
            if Self.isLogWorthy(counters.malformedEvents) {
                actions.append(.log(.malformedEvent(error, count: counters.malformedEvents)))
            }
            return
        }
        switch event {
        case .leMeta(.advertisingReport(let reports)):
            counters.advertisingReports += reports.count
            actions.append(.advertisingReports(reports))
        case .leMeta(.extendedAdvertisingReport(let reports)):
            var delivered = [LEAdvertisingReport]()
            delivered.reserveCapacity(reports.count)
            for report in reports {
                switch LEAdvertisingReportView.withView(of: report, { reassembler.accept($0) }) {
                case .asItCame: delivered.append(report)
                case .instead(let whole): delivered.append(whole)
                case .nothing: break
                }
            }
            if !delivered.isEmpty {
                counters.advertisingReports += delivered.count
                actions.append(.advertisingReports(delivered))
            }
        case .commandComplete(let complete):
            let answer: Answer = complete.returnParameters.isEmpty ? .empty : .complete(complete.returnParameters)
            handleAnswer(opcode: complete.opcode, credits: complete.numberOfCommandPackets, answer: answer, now: now, into: &actions)
        case .commandStatus(let status):
            handleAnswer(opcode: status.opcode, credits: status.numberOfCommandPackets, answer: .status(status.status), now: now, into: &actions)
        case .hardwareError(let code):
            counters.hardwareErrors += 1
            // With the transport closed a reopen is already on its way; it resets anyway.
            if case .closed = phase { return }
            beginRecovery(.hardwareError(code: code), now: now, transportClosed: false, into: &actions)
        case .unknown, .leMeta(.unknown):
            counters.unknownEvents += 1
            actions.append(.event(event))
        default:
            actions.append(.event(event))
        }
    }

    /// A Command Complete or Command Status, reduced to what routing needs.
    enum Answer {
        case complete(ArraySlice<UInt8>)
        case status(HCIStatus)
        /// Command Complete without even a status byte.
        case empty

        var status: HCIStatus? {
            switch self {
            case .complete(let parameters): parameters.first.map(HCIStatus.init(rawValue:))
            case .status(let status): status
            case .empty: nil
            }
        }
    }

    private mutating func handleAnswer(opcode: Opcode, credits: UInt8, answer: Answer, now: Instant, into actions: inout [HostAction]) {
        guard let entry = flow.receiveAnswer(opcode: opcode, numberOfCommandPackets: credits, now: now) else {
            // Opcode 0 only hands out credits; anything else answers nothing we sent.
            if opcode != .noOperation {
                counters.unmatchedCommandCompletes += 1
                if Self.isLogWorthy(counters.unmatchedCommandCompletes) {
                    actions.append(.log(.unmatchedCommandComplete(opcode, count: counters.unmatchedCommandCompletes)))
                }
            }
            return
        }
        switch entry.origin {
        case .client(let token, _):
            let outcome: HostCommandResult.Outcome = switch answer {
            case .complete(let parameters): .completed(status: HCIStatus(rawValue: parameters.first ?? 0), returnParameters: parameters)
            case .status(let status): .status(status)
            case .empty: .completed(status: .unspecifiedError, returnParameters: [])
            }
            actions.append(.commandFinished(HostCommandResult(token: token, opcode: opcode, outcome: outcome)))
        case .host:
            hostAnswer(opcode: opcode, answer: answer, now: now, into: &actions)
        }
    }

    // MARK: Timers

    private mutating func processTimers(now: Instant, into actions: inout [HostAction]) {
        while let expiry = flow.takeExpired(now: now) {
            switch expiry {
            case .creditStarvation:
                beginRecovery(.creditStarvation, now: now, transportClosed: false, into: &actions)
                return
            case .command(let entry):
                counters.commandTimeouts += 1
                switch entry.origin {
                case .client(let token, let recoverOnTimeout):
                    actions.append(.commandFinished(HostCommandResult(token: token, opcode: entry.opcode, outcome: .timedOut)))
                    actions.append(.log(.clientCommandTimedOut(entry.opcode)))
                    if recoverOnTimeout {
                        beginRecovery(.commandTimeout(entry.opcode), now: now, transportClosed: false, into: &actions)
                        return
                    }
                    flow.restoreCreditAfterLoss()
                case .host:
                    if hostTimeoutIsTolerated(entry.opcode, now: now, into: &actions) {
                        flow.restoreCreditAfterLoss()
                        continue
                    }
                    let reason: RecoveryReason = if case .scanning = phase, entry.opcode == Self.probeOpcode {
                        .controllerStalled
                    } else {
                        .commandTimeout(entry.opcode)
                    }
                    beginRecovery(reason, now: now, transportClosed: false, into: &actions)
                    return
                }
            }
        }
        switch phase {
        case .waitingToReset(let until) where until <= now:
            startBringUp(now: now, into: &actions)
        case .scanning:
            if !probeOutstanding, let probe = nextProbeAt, probe <= now {
                probeOutstanding = true
                counters.probesSent += 1
                flow.enqueue(ReadBDAddrCommand().packet, opcode: Self.probeOpcode, origin: .host)
            }
        default:
            break
        }
    }

    /// Read BD_ADDR: cheap, side-effect free, and answered by every controller
    /// including Bumble's virtual one.
    static let probeOpcode = Opcode.readBDAddr

    mutating func pump(now: Instant, into actions: inout [HostAction]) {
        for packet in flow.takeSendable(now: now) {
            counters.commandsSent += 1
            actions.append(.send(packet))
        }
    }

    /// Drops every queued and outstanding command; clients hear `.flushed`.
    mutating func flushCommands(into actions: inout [HostAction]) -> Int {
        let dropped = flow.flush()
        for entry in dropped {
            if case .client(let token, _) = entry.origin {
                actions.append(.commandFinished(HostCommandResult(token: token, opcode: entry.opcode, outcome: .flushed)))
            }
        }
        return dropped.count
    }

    mutating func setState(_ newState: HostState, into actions: inout [HostAction]) {
        guard newState != state else { return }
        state = newState
        actions.append(.stateChanged(newState))
    }

    /// 1, 2, 4, 8, …: enough to see a problem without a controller flooding the journal.
    static func isLogWorthy(_ count: Int) -> Bool { count > 0 && count & (count - 1) == 0 }
}
