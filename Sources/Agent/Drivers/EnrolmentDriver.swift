import BluetoothCrypto
import Config
import Enrolment
import EventLoop
import Fleet
import HCI
import Host
import HostDrivers
import Journal
import SecurityManager

/// Enrolment inside the running agent (SPEC §15; docs/cli.md, `enroll`): a window asked for
/// on the status socket. It advertises connectable beside the door's scanning, serves the
/// enrolment GATT database on the agent's data path, runs one `EnrolmentSession` (the
/// decisions) and tells the installer's command every step over the socket. The door
/// goes on scanning, deciding and delivering; only the door beacon, whose advertising set
/// the window takes, pauses, and persistent-connect initiation where the controller
/// cannot advertise connectable while initiating. One window at a time.
final class EnrolmentDriver: AgentDriver {
    struct Window {
        var session: EnrolmentSession
        let request: EnrolmentChannel.Request
        let stream: LocalStream
        let family: CommandFamily
        /// Persistent-connect initiation was paused for this window.
        let pausedInitiation: Bool
    }

    private let link: ControllerDriver
    /// The controller's data path: the proofs' when the door makes connections, else its own.
    let dataPath: DataPathDriver
    private let gattServer: GATTServerDriver
    private let doorBeacon: DoorBeaconAdvertiser?
    private let connect: ConnectSchedulerDriver?
    private let activeScanning: Bool
    private let gatewayId: String
    /// What a phone's identity is checked against for the person being enrolled: what is
    /// in force when it connects.
    private let identities: (String) -> IdentityCheck
    var log: LogSink
    private var window: Window?
    private lazy var timer = DeadlineTimer(loop: link.loop) { [unowned self] in
        self.step { $0.timerFired(now: self.link.loop.now) }
    }

    /// What the link and the data path report reaches it through the agent
    /// (GatewayAgent+FanOut); `connect`, when the door makes connections, is the scheduler
    /// to pause on controllers that need it.
    init(link: ControllerDriver, dataPath: DataPathDriver, doorBeacon: DoorBeaconAdvertiser?, connect: ConnectSchedulerDriver?,
         activeScanning: Bool, gatewayId: String, identities: @escaping (String) -> IdentityCheck,
         log: LogSink) throws(GATTDatabaseError) {
        self.link = link
        self.dataPath = dataPath
        self.doorBeacon = doorBeacon
        self.connect = connect
        self.activeScanning = activeScanning
        self.gatewayId = gatewayId
        self.identities = identities
        self.log = log
        // What a phone reads before pairing: its refusal (encryption needed) is what makes
        // the phone pair (docs/pairing.md).
        gattServer = GATTServerDriver(dataPath: dataPath, database: try .enrolment(deviceName: gatewayId, gatewayId: gatewayId))
        gattServer.attach()
    }

    var isOpen: Bool { window != nil }

    /// Opens a window for `request`, or tells the command why not and closes its stream.
    func open(_ request: EnrolmentChannel.Request, stream: LocalStream) {
        guard window == nil else {
            return refuse(stream, "an enrolment window is already open on this door; try again when it has ended")
        }
        guard let info = link.host.controllerInfo, link.host.isControllerAnswering else {
            return refuse(stream, "the door's controller is not up (see beacon-gateway status); try again when it scans")
        }
        guard let address = EnrolmentAddress.identity(of: info) else {
            return refuse(stream, "the controller has no public address to pair from, and setting a static random one "
                + "failed (see the journal)")
        }
        guard info.supportedStates.canAdvertiseConnectableWhileScanning(active: activeScanning) else {
            return refuse(stream, "this controller cannot advertise connectable while it scans (LE Supported States): "
                + "stop the service and enrol standalone (docs/cli.md)")
        }
        let pausesInitiation = connect != nil && !info.supportedStates.canAdvertiseConnectableWhileInitiating
        let seconds = Int64(request.seconds)
        let method: PairingMethod = request.comparesDigits ? .numericComparison : .justWorks
        window = Window(
            session: EnrolmentSession(configuration: .window(.seconds(seconds), method: method, name: gatewayId, address: address)),
            request: request, stream: stream, family: info.commandFamily, pausedInitiation: pausesInitiation)
        stream.onLine = { [unowned self] line in self.answered(line) }
        stream.onClosed = { [unowned self] in self.end("the enroll command left before the window ended") }
        log.log(.notice, "enrolment window open", [
            "person": request.personId, "seconds": "\(seconds)",
            "pairing": method.rawValue,
        ])
        // The window takes the beacon's advertising set; its stop goes out before the
        // window's advertising (the controller's commands run in order).
        doorBeacon?.setPaused(true)
        if pausesInitiation { connect?.setInitiationPaused(true) }
        tell(.progress(EnrolmentProgress.windowOpened(seconds: seconds, name: gatewayId, method: method)))
        tell(.progress("the door keeps scanning and deciding during the window"
            + (doorBeacon == nil ? "" : "; its beacon pauses") + (pausesInitiation ? "; persistent connects pause" : "")))
        step { $0.start(now: self.link.loop.now) }
    }

    /// Nothing: a window opens when one is asked for (`open`).
    func start(_ configuration: GatewayConfiguration) {}

    /// Nothing: what it is built with (the gateway's id, active scanning) applies on
    /// restart, as for the controller it runs on.
    func reload(_ configuration: GatewayConfiguration, previous: GatewayConfiguration) {}

    /// The agent stops: a window still open ends and its command is told, while the
    /// controller (stopped after it) still takes the window's last commands.
    func stop() {
        end("the agent is stopping")
    }

    // MARK: Inputs

    func hostStateChanged(_ state: HostState) {
        guard case .recovering = state else { return }
        // A reset ends the advertising and the phone's link with it.
        end("the controller was reset during the window")
    }

    /// A peripheral connection's happening: the GATT server first, so the connection's
    /// server exists and knows the link's security before the window acts on it.
    func peripheralAction(_ action: LEDataPath.Action, now: Instant) {
        gattServer.peripheralAction(action)
        peripheral(action, now: now)
    }

    /// A connection closed: the GATT server drops its server, then the window hears of it.
    func connectionClosed(_ handle: UInt16, now: Instant) {
        gattServer.connectionClosed(handle)
        step { $0.connectionClosed(handle: handle, now: now) }
    }

    private func peripheral(_ action: LEDataPath.Action, now: Instant) {
        switch action {
        case .peripheralConnected(let complete):
            guard window != nil else {
                // A central that connected as a window ended: nothing of ours serves it.
                return dataPath.disconnect(complete.connectionHandle)
            }
            let check = identities(window!.request.personId)
            step {
                $0.identityCheck = check
                return $0.peripheralConnected(complete, now: now)
            }
        case .securityManager(let handle, let pdu):
            step { $0.securityManagerPDU(pdu, handle: handle, now: now) }
        case .longTermKeyRequested(let request):
            guard window != nil else {
                return link.submit(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: request.connectionHandle),
                                   recoverOnTimeout: false) { _, _ in }
            }
            step { $0.longTermKeyRequested(request, now: now) }
        case .encryptionChanged(let handle, let status, let enabled):
            step { $0.encryptionChanged(handle: handle, status: status, enabled: enabled, now: now) }
        default:
            break
        }
    }

    private func answered(_ line: [UInt8]) {
        guard let matches = EnrolmentChannel.answer(line) else {
            return end("the enroll command sent something other than yes or no")
        }
        step { $0.numericComparisonAnswered(matches: matches, now: self.link.loop.now) }
    }

    private func end(_ reason: String) {
        step { $0.end(reason, now: self.link.loop.now) }
    }

    private func step(_ input: (inout EnrolmentSession) -> [EnrolmentAction]) {
        guard var current = window else { return }
        let actions = input(&current.session)
        window = current
        for action in actions { perform(action) }
        timer.arm(at: window?.session.nextDeadline)
    }

    // MARK: Actions

    private func perform(_ action: EnrolmentAction) {
        guard let current = window else { return }
        switch action {
        case .delegatePairing(let delegates):
            dataPath.setDelegatesPeripheralPairing(delegates)
        case .startAdvertising(let advertisement):
            link.submitInOrder(advertisement.startCommands(family: current.family)) { [unowned self] failure in
                self.end(failure)
            }
        case .stopAdvertising:
            link.submitInOrder([EnrolmentAdvertisement.stopCommand(family: current.family)]) { _ in }
        case .connected(_, let peer):
            tell(.progress(EnrolmentProgress.phoneConnected(peer.address.description)))
        case .sendSecurityManager(let handle, let pdu):
            dataPath.sendSecurityManager(pdu, on: handle, now: link.loop.now)
        case .replyLongTermKey(let handle, let key):
            link.submit(LELongTermKeyRequestReplyCommand(connectionHandle: handle, longTermKey: key), recoverOnTimeout: false) { _, _ in }
        case .rejectLongTermKeyRequest(let handle):
            link.submit(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: handle), recoverOnTimeout: false) { _, _ in }
        case .compareNumericValue(let value):
            tell(.compare(value))
        case .turnedAway(let why):
            let refused: String = if case .identityRefused(let refusal) = why { refusal.code } else { "-" }
            log.log(.notice, "enrolment central turned away", ["person": current.request.personId, "reason": why.message, "refused": refused])
            tell(.progress(why.message))
        case .disconnect(let handle):
            dataPath.disconnect(handle)
        case .finished(let outcome):
            finished(outcome, current)
        }
    }

    /// The window is over: the command gets the outcome, the door its beacon and its
    /// connects back.
    private func finished(_ outcome: EnrolmentOutcome, _ current: Window) {
        window = nil
        let personId = current.request.personId
        // Nothing of the pairing but the person, the identity address, the method and the outcome.
        if case .enrolled(let method, let identity) = outcome {
            log.log(.notice, "phone enrolled", [
                "person": personId, "identity_address": identity.address.description, "pairing": method.rawValue,
                // Not "irk": a field of that name is masked, whatever its value (LogRedaction).
                "irk_received": identity.irk == nil ? "no" : "yes",
            ])
            current.stream.send(EnrolmentChannel.line(.enrolled(EnrolmentChannel.Enrolled(
                pairing: method.rawValue, identityAddress: identity.address.description, identityAddressIsRandom: identity.isRandom,
                irk: identity.irk.map { HexText.lowercase($0.revealed.mostSignificantFirst) }))))
        } else {
            log.log(.notice, "enrolment window ended", ["person": personId, "outcome": outcome.message])
            current.stream.send(EnrolmentChannel.line(.failed(outcome.message)))
        }
        current.stream.finish()
        doorBeacon?.setPaused(false)
        if current.pausedInitiation { connect?.setInitiationPaused(false) }
    }

    private func tell(_ message: EnrolmentChannel.Message) {
        window?.stream.send(EnrolmentChannel.line(message))
    }

    private func refuse(_ stream: LocalStream, _ reason: String) {
        Self.refuse(stream, reason, log: log)
    }

    /// Tells the command why no window opens, and ends the exchange.
    static func refuse(_ stream: LocalStream, _ reason: String, log: LogSink) {
        log.log(.warning, "enrolment refused", ["reason": reason])
        stream.send(EnrolmentChannel.line(.failed(reason)))
        stream.finish()
    }
}
