import EventLoop
import HCI
import Host

/// Drives the sans-IO `LEDataPath` on the event loop beside a `ControllerLink`: feeds it
/// the link's host states, events and ACL data, sends the ACL it produces, arms its
/// timer, and submits Disconnect when it asks. One per controller: ACL credits are the
/// controller's, shared by every connection.
public final class DataPathLink {
    public let link: ControllerLink
    public private(set) var dataPath: LEDataPath

    /// A connection ended (disconnection or controller reset), after its exchange failed.
    public var onConnectionClosed: (UInt16, LEDataPath.CloseReason, Instant) -> Void = { _, _, _ in }
    /// Whether an accepted L2CAP connection parameter update is applied with LE Connection
    /// Update. Off by default: proof connections last well under a second, and a
    /// controller that ignores the command would hold up the command queue for its timeout.
    public var appliesConnectionParameterUpdates = false

    private var exchangeHandlers: [UInt16: (Result<GATTWriteReadExchange.Completion, GATTWriteReadExchange.Failure>, Instant) -> Void] = [:]
    /// At the machine's next deadline: hand it the time.
    private lazy var timer = DeadlineTimer(loop: link.loop) { [unowned self] in
        let now = self.link.loop.now
        self.perform(self.dataPath.timerFired(now: now), now: now)
    }

    private var nextToken: UInt64 = 0

    /// Tokens of the commands this class submits: a range of their own, so other users of
    /// the link can tell them apart in `onCommandFinished`.
    public static let commandTokenBase: UInt64 = 0xDA7A_0000_0000_0000

    public init(link: ControllerLink, configuration: LEDataPath.Configuration = .init()) {
        self.link = link
        dataPath = LEDataPath(configuration: configuration)
    }

    /// Puts itself in front of the link's current `onStateChange`, `onEvent` and
    /// `onACLData` callbacks (which still run, after the data path has seen the input).
    public func attach() {
        let previousState = link.onStateChange
        link.onStateChange = { [unowned self] state in
            self.hostStateChanged(state, now: self.link.loop.now)
            previousState(state)
        }
        let previousEvent = link.onEvent
        link.onEvent = { [unowned self] event, now in
            self.handle(event, now: now)
            previousEvent(event, now)
        }
        let previousACL = link.onACLData
        link.onACLData = { [unowned self] packet, now in
            self.receiveACL(packet, now: now)
            previousACL(packet, now)
        }
        // The link may already be scanning when we attach.
        if let info = link.host.controllerInfo {
            hostStateChanged(.scanning(info), now: link.loop.now)
        }
    }

    // MARK: Inputs (for callers wiring the link themselves)

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

    /// HCI Disconnect for `handle`.
    public func disconnect(_ handle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        let command = DisconnectCommand(connectionHandle: handle, reason: reason)
        link.submit(packet: command.packet, opcode: DisconnectCommand.opcode, token: token(), recoverOnTimeout: true)
    }

    private func token() -> UInt64 {
        nextToken &+= 1
        return Self.commandTokenBase | (nextToken & 0xFFFF_FFFF)
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
            }
        }
        armTimer()
    }

    private func applyParameters(_ request: ConnectionParameterRequest, on handle: UInt16) {
        let command = LEConnectionUpdateCommand(connectionHandle: handle, connection: LEConnectionParameters(
            intervalMin: request.intervalMin, intervalMax: request.intervalMax, maxLatency: request.peripheralLatency,
            supervisionTimeout: request.supervisionTimeout, minCELength: 0, maxCELength: 0))
        link.submit(packet: command.packet, opcode: LEConnectionUpdateCommand.opcode, token: token(), recoverOnTimeout: false)
    }

    private func armTimer() {
        timer.arm(at: dataPath.nextDeadline)
    }
}
