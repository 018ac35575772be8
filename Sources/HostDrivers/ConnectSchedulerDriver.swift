import EventLoop
import HCI
import Host

/// Drives the sans-IO `ConnectScheduler` beside a `ControllerDriver`: turns its actions into
/// HCI commands (in the controller's command family), feeds it connection events and
/// command results, and arms its timer. The agent and `beacon-gateway prove` use it, as
/// part of `ProofDrivers`.
///
/// Its inputs, the host's states and HCI events, reach it after the data path's
/// (`ProofDrivers.hostStateChanged(_:)`, `ProofDrivers.handle(_:now:)`): the data path must
/// have registered a new connection by the time `onConnected` runs.
public final class ConnectSchedulerDriver {
    public let link: ControllerDriver
    public private(set) var scheduler: ConnectScheduler

    public var onConnected: (_ tagIndex: Int, _ handle: UInt16, _ now: Instant) -> Void = { _, _, _ in }
    public var onConnectionLost: (_ tagIndex: Int, _ handle: UInt16, _ reason: HCIStatus, _ now: Instant) -> Void = { _, _, _, _ in }
    public var onRSSI: (_ tagIndex: Int, _ handle: UInt16, _ rssi: Int, _ now: Instant) -> Void = { _, _, _, _ in }
    public var onLog: (String) -> Void = { _ in }
    /// For `prove`'s timing: when LE Create Connection was last sent.
    public private(set) var lastCreateConnectionAt: Instant?
    public private(set) var createConnectionCount = 0

    /// At the machine's next deadline: hand it the time.
    private lazy var timer = DeadlineTimer(loop: link.loop) { [unowned self] in
        let now = self.link.loop.now
        self.perform(self.scheduler.timerFired(now: now), now: now)
    }

    private var family: CommandFamily = .legacy

    private let activeScanning: Bool

    /// Built on a link that runs already (at an agent's reload), it starts from the
    /// controller's state.
    public init(link: ControllerDriver, configuration: ConnectScheduler.Configuration, activeScanning: Bool = false) {
        self.activeScanning = activeScanning
        self.link = link
        scheduler = ConnectScheduler(configuration: configuration)
        if let info = link.host.controllerInfo { hostStateChanged(.scanning(info)) }
    }

    // MARK: Wanted set

    public func want(tagIndex: Int, peer: ConnectPeer, tracked: Bool = false) {
        let now = link.loop.now
        perform(scheduler.want(tagIndex: tagIndex, peer: peer, tracked: tracked, now: now), now: now)
    }

    public func unwant(tagIndex: Int) {
        let now = link.loop.now
        perform(scheduler.unwant(tagIndex: tagIndex, now: now), now: now)
    }

    /// Holds create-connection back (or lets it go again) for an enrolment window on a
    /// controller that cannot advertise connectable while initiating.
    public func setInitiationPaused(_ paused: Bool) {
        let now = link.loop.now
        perform(scheduler.setInitiationPaused(paused, now: now), now: now)
    }

    // MARK: Inputs

    public func hostStateChanged(_ state: HostState) {
        let now = link.loop.now
        switch state {
        case .scanning(let info):
            guard scheduler.phase == .unavailable else { return }
            family = info.commandFamily
            let capabilities = ConnectScheduler.Capabilities(
                acceptListSize: info.filterAcceptListSize, supportedStates: info.supportedStates, activeScanning: activeScanning)
            perform(scheduler.controllerReady(capabilities, now: now), now: now)
        case .recovering, .initializing, .starting:
            guard scheduler.phase != .unavailable else { return }
            perform(scheduler.controllerReset(now: now), now: now)
        }
    }

    public func handle(_ event: HCIEvent, now: Instant) {
        switch event {
        case .leMeta(.connectionComplete(let complete)):
            perform(scheduler.connectionCompleted(
                status: complete.status, handle: complete.connectionHandle, role: complete.role,
                peerAddress: complete.peerAddress, peerAddressType: complete.peerAddressType, now: now), now: now)
        case .disconnectionComplete(let complete) where complete.status == .success:
            perform(scheduler.disconnected(handle: complete.connectionHandle, reason: complete.reason, now: now), now: now)
        default:
            break
        }
    }

    /// The status the scheduler sees for a command's end: no answer counts as a failure.
    private static func status(of outcome: HostCommandResult.Outcome) -> HCIStatus {
        switch outcome {
        case .completed(let status, _), .status(let status): status
        case .timedOut, .flushed, .notSent: .unspecifiedError
        }
    }

    private func rssiRead(_ outcome: HostCommandResult.Outcome, tagIndex: Int, handle: UInt16, now: Instant) {
        // Status, handle (2), RSSI (signed); 127 means "not available".
        guard case .completed(.success, let returnParameters) = outcome, returnParameters.count >= 4 else { return }
        let rssi = Int(Int8(bitPattern: returnParameters[returnParameters.startIndex + 3]))
        if rssi != 127 { onRSSI(tagIndex, handle, rssi, now) }
    }

    // MARK: Actions

    private func perform(_ actions: [ConnectAction], now: Instant) {
        for action in actions {
            switch action {
            case .clearAcceptList:
                submit(LEClearFilterAcceptListCommand())
            case .addToAcceptList(let peer):
                submit(LEAddDeviceToFilterAcceptListCommand(addressType: peer.addressType, address: peer.address))
            case .removeFromAcceptList(let peer):
                submit(LERemoveDeviceFromFilterAcceptListCommand(addressType: peer.addressType, address: peer.address))
            case .createConnectionFromAcceptList:
                createConnection(policy: .filterAcceptList, peer: nil, now: now)
            case .createConnection(let peer):
                createConnection(policy: .peerAddress, peer: peer, now: now)
            case .cancelCreateConnection:
                submit(LECreateConnectionCancelCommand())
            case .pauseScanning(let reason):
                // Through the host's command flow, so the disable goes out before the
                // create-connection the scheduler emits after it.
                if !link.host.isScanningPaused { onLog("scanning paused: \(reason)") }
                link.setScanningPaused(true)
            case .resumeScanning:
                link.setScanningPaused(false)
            case .readRSSI(let handle, let tagIndex):
                // Some controllers (Bumble's) never answer it: no reason to reset them.
                link.submit(ReadRSSICommand(connectionHandle: handle), recoverOnTimeout: false) { [unowned self] outcome, now in
                    self.rssiRead(outcome, tagIndex: tagIndex, handle: handle, now: now)
                }
            case .connected(let tagIndex, let handle):
                onConnected(tagIndex, handle, now)
            case .connectionLost(let tagIndex, let handle, let reason):
                onConnectionLost(tagIndex, handle, reason, now)
            case .disconnect(let handle):
                submit(DisconnectCommand(connectionHandle: handle, reason: .remoteUserTerminated))
            case .log(let message):
                onLog(message)
            }
        }
        armTimer()
    }

    private func createConnection(policy: InitiatorFilterPolicy, peer: ConnectPeer?, now: Instant) {
        lastCreateConnectionAt = now
        createConnectionCount += 1
        let address = peer?.address ?? BluetoothAddress(rawValue: 0)
        let type = peer?.addressType ?? .publicDevice
        switch family {
        case .legacy:
            submit(LECreateConnectionCommand(filterPolicy: policy, peerAddressType: type, peerAddress: address))
        case .extended:
            submit(LEExtendedCreateConnectionCommand(filterPolicy: policy, peerAddressType: type, peerAddress: address))
        }
    }

    /// A command whose end the scheduler hears of.
    private func submit<Command: HCICommand>(_ command: Command) {
        link.submit(command) { [unowned self] outcome, now in
            self.perform(self.scheduler.commandFinished(Command.opcode, status: Self.status(of: outcome), now: now), now: now)
        }
    }

    private func armTimer() {
        timer.arm(at: scheduler.nextDeadline)
    }
}
