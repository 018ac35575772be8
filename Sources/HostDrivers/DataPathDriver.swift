import EventLoop
import HCI
import Host

/// Drives the sans-IO `LEDataPath` on the event loop beside a `ControllerDriver`: takes the
/// link's host states, events and ACL data (the link owner hands them on, see
/// docs/architecture.md, "Who hears what, in which order"), sends the ACL it produces, arms
/// its timer, and submits Disconnect when it asks. One per controller: ACL credits are the
/// controller's, shared by every connection.
public final class DataPathDriver {
    public let link: ControllerDriver
    public private(set) var dataPath: LEDataPath

    /// A connection ended (disconnection or controller reset), before its exchange is
    /// reported failed. One handler, the owner's: it tells the parties that follow the
    /// data path's connections (the proof runner, a GATT server, enrolment) in its order.
    public var onConnectionClosed: (UInt16, LEDataPath.CloseReason, Instant) -> Void = { _, _, _ in }
    /// Whether an accepted L2CAP connection parameter update is applied with LE Connection
    /// Update. Off by default: proof connections last well under a second, and a
    /// controller that ignores the command would hold up the command queue for its timeout.
    public var appliesConnectionParameterUpdates = false
    /// What happens on peripheral connections (a central connected to our advertising):
    /// the connection itself, SMP, LTK requests and encryption changes, for a GATT server
    /// and enrolment, in the order the owner's handler writes. ATT requests go to
    /// `attributeRequestHandler` instead.
    public var onPeripheral: (LEDataPath.Action, Instant) -> Void = { _, _ in }
    /// Answers the ATT requests of a peripheral connection's central: `GATTServerDriver`
    /// plugs in here (`answerAttribute` sends its PDUs). Without it, every request is
    /// answered Request Not Supported and commands are dropped.
    public var attributeRequestHandler: (UInt16, [UInt8], Instant) -> Void = { _, _, _ in }

    private var exchangeHandlers: [UInt16: (Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>, Instant) -> Void] = [:]
    /// At the machine's next deadline: hand it the time.
    private lazy var timer = DeadlineTimer(loop: link.loop) { [unowned self] in
        let now = self.link.loop.now
        self.perform(self.dataPath.timerFired(now: now), now: now)
    }

    /// Built on a link that runs already (at an agent's reload, or its first enrolment
    /// request), it starts from the controller's state.
    public init(link: ControllerDriver, configuration: LEDataPath.Configuration = .init()) {
        self.link = link
        dataPath = LEDataPath(configuration: configuration)
        attributeRequestHandler = { [unowned self] handle, pdu, now in
            // No GATT server attached: the one place a peripheral's ATT request is refused.
            guard let answer = ATTErrorResponse.requestNotSupported(answering: pdu) else { return }
            self.answerAttribute(answer, on: handle, now: now)
        }
        if let info = link.host.controllerInfo {
            hostStateChanged(.scanning(info), now: link.loop.now)
        }
    }

    // MARK: Inputs (the link owner's handlers call them)

    public func hostStateChanged(_ state: HostState, now: Instant) {
        perform(dataPath.hostStateChanged(state), now: now)
    }

    public func handle(_ event: HCIEvent, now: Instant) {
        perform(dataPath.handle(event, now: now), now: now)
    }

    public func receiveACL(_ packet: HCIPacket, now: Instant) {
        perform(dataPath.receiveACL(packet, now: now), now: now)
    }

    // MARK: Operations

    /// Runs a write-then-read exchange on an established connection. The caller vouches
    /// for the handle (it came from LE Connection Complete), so it is registered if the
    /// completion event has not been seen yet.
    public func startExchange(_ request: GATTWriteReadExchange.Request, on handle: UInt16, now: Instant,
                              completion: @escaping (Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>, Instant) -> Void) {
        if dataPath.isReady { dataPath.connectionOpened(handle) }
        exchangeHandlers[handle] = completion
        perform(dataPath.startExchange(request, on: handle, now: now), now: now)
    }

    /// Opens or closes pairing on peripheral connections made from now on (enrolment's window).
    public func setDelegatesPeripheralPairing(_ delegates: Bool) {
        dataPath.delegatesPeripheralPairing = delegates
    }

    /// An ATT PDU to the central of a peripheral connection (the GATT server's answer).
    public func answerAttribute(_ pdu: [UInt8], on handle: UInt16, now: Instant) {
        perform(dataPath.sendAttribute(pdu, on: handle), now: now)
    }

    /// An SMP PDU to the central of a delegated peripheral connection.
    public func sendSecurityManager(_ pdu: [UInt8], on handle: UInt16, now: Instant) {
        perform(dataPath.sendSecurityManager(pdu, on: handle), now: now)
    }

    /// HCI Disconnect for `handle`. Its outcome needs no answer here: the end of the
    /// connection arrives as Disconnection Complete, and a controller that does not
    /// answer is reset (which ends every connection).
    public func disconnect(_ handle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        link.submit(DisconnectCommand(connectionHandle: handle, reason: reason)) { _, _ in }
    }

    // MARK: Actions

    private func perform(_ actions: [LEDataPath.Action], now: Instant) {
        for action in actions {
            switch action {
            case .sendACL(let packet):
                link.sendACL(packet)
            case .disconnect(let handle, let reason):
                disconnect(handle, reason: reason)
            case .exchangeFinished(let handle, let result):
                if let handler = exchangeHandlers.removeValue(forKey: handle) { handler(result, now) }
            case .connectionParametersAccepted(let handle, let request):
                if appliesConnectionParameterUpdates { applyParameters(request, on: handle) }
            case .connectionClosed(let handle, let reason):
                onConnectionClosed(handle, reason, now)
            case .attributeRequest(let handle, let pdu):
                attributeRequestHandler(handle, pdu, now)
            case .rejectLongTermKeyRequest(let handle):
                // Best effort: a refused or lost answer leaves the central's encryption failing.
                link.submit(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: handle), recoverOnTimeout: false) { _, _ in }
            case .peripheralConnected, .securityManager, .longTermKeyRequested, .encryptionChanged:
                onPeripheral(action, now)
            }
        }
        armTimer()
    }

    private func applyParameters(_ request: ConnectionParameterRequest, on handle: UInt16) {
        let command = LEConnectionUpdateCommand(connectionHandle: handle, connection: LEConnectionParameters(
            intervalMin: request.intervalMin, intervalMax: request.intervalMax, maxLatency: request.peripheralLatency,
            supervisionTimeout: request.supervisionTimeout, minCELength: 0, maxCELength: 0))
        // Best effort: a controller that refuses or ignores it keeps the old parameters.
        link.submit(command, recoverOnTimeout: false) { _, _ in }
    }

    private func armTimer() {
        timer.arm(at: dataPath.nextDeadline)
    }
}
