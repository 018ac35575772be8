import BluetoothCrypto
import Config
import Enrolment
import EventLoop
import Fleet
import Glibc
import HCI
import Host
import HostDrivers
import Journal
import SecurityManager

/// The loop behind standalone `beacon-gateway enroll`: the configured controller, its
/// data path, the enrolment GATT database served on it, and one `EnrolmentSession` whose
/// actions become HCI commands, SMP PDUs and the installer's screen. Progress goes to
/// standard error, the person to standard output.
final class EnrollSession {
    private let configuration: GatewayConfiguration
    private let personId: String
    private let tagId: String
    private let window: Duration
    private let method: PairingMethod
    private let json: Bool
    private let loop = EventLoop()
    private var link: ControllerDriver!
    private var dataPath: DataPathDriver!
    private var gattServer: GATTServerDriver!
    private var enrolment: EnrolmentSession?
    private var family = CommandFamily.legacy
    private var outcome: EnrolmentOutcome?
    private var fatal: String?
    private var stdinRegistration: EventLoop.Registration?
    /// The phone's link the session asked to drop: the command ends once it is down.
    private var droppingHandle: UInt16?
    private lazy var timer = DeadlineTimer(loop: loop) { [unowned self] in
        self.step { $0.timerFired(now: self.loop.now) }
    }

    init(configuration: GatewayConfiguration, personId: String, tagId: String, window: Duration, method: PairingMethod, json: Bool) {
        self.configuration = configuration
        self.personId = personId
        self.tagId = tagId
        self.window = window
        self.method = method
        self.json = json
    }

    /// True when a phone was enrolled (printed).
    func run() -> Bool {
        let controller: ControllerSession
        do {
            controller = try ControllerSession(
                loop: loop, spec: configuration.bluetooth.transport, scan: configuration.bluetooth.scanSettings(),
                staticRandomAddress: EnrolmentAddress.staticRandom(site: configuration.gateway.site ?? "", gatewayId: configuration.gateway.id),
                isPermanent: { error in ScanSession.isPermanent(error, replay: false) })
        } catch {
            printError("enroll: " + error.message)
            return false
        }
        link = controller.link
        dataPath = DataPathDriver(link: link)
        do {
            // What a phone reads before pairing: its refusal (encryption needed) is what
            // makes the phone pair (docs/pairing.md).
            gattServer = GATTServerDriver(dataPath: dataPath, database: try .enrolment(
                deviceName: configuration.gateway.id, gatewayId: configuration.gateway.id))
        } catch {
            printError("enroll: the enrolment GATT database: \(error)")
            return false
        }
        gattServer.attach()
        link.onFatalError = { [unowned self] error in self.stop(failure: error.message) }
        // Who hears what, in which order (docs/architecture.md): the data path before the
        // window, the GATT server before the enrolment session.
        link.onStateChanged = { [unowned self] state in
            self.dataPath.hostStateChanged(state, now: self.loop.now)
            guard case .scanning(let info) = state else { return }
            self.controllerReady(info)
        }
        link.onEvent = { [unowned self] event, now in self.dataPath.handle(event, now: now) }
        link.onACLData = { [unowned self] packet, now in self.dataPath.receiveACL(packet, now: now) }
        dataPath.onPeripheral = { [unowned self] action, now in
            self.gattServer.peripheralAction(action)
            self.peripheral(action, now: now)
        }
        dataPath.onConnectionClosed = { [unowned self] handle, _, now in
            self.gattServer.connectionClosed(handle)
            self.step { $0.connectionClosed(handle: handle, now: now) }
            guard handle == self.droppingHandle else { return }
            self.droppingHandle = nil
            if self.outcome != nil { self.loop.stop() }
        }
        if let failure = controller.run(limit: nil, log: LogSink()) { fatal = fatal ?? failure }
        if let fatal {
            printError("enroll: " + fatal)
            return false
        }
        guard let outcome else { return false }
        return report(outcome)
    }

    // MARK: Inputs

    private func controllerReady(_ info: ControllerInfo) {
        guard enrolment == nil else {
            // The controller was reset under the window: its advertising and the phone's link are gone.
            return stop(failure: "the controller was reset during the window")
        }
        guard let address = EnrolmentAddress.identity(of: info) else {
            return stop(failure: "the controller has no public address to pair from, and setting a static random one failed")
        }
        family = info.commandFamily
        // Standalone, nothing here uses reports: scanning off leaves the radio to the
        // advertising and the phone's link, also on controllers whose LE Supported States
        // forbid connectable advertising while scanning (docs/cli.md).
        link.setScanningPaused(true)
        let session = EnrolmentSession(configuration: .window(window, method: method, name: configuration.gateway.id, address: address))
        enrolment = session
        printError("enroll: " + EnrolmentProgress.windowOpened(seconds: window.components.seconds, name: configuration.gateway.id,
                                                              method: method))
        step { $0.start(now: self.loop.now) }
    }

    private func peripheral(_ action: LEDataPath.Action, now: Instant) {
        switch action {
        case .peripheralConnected(let complete):
            // Standalone, the configuration file is what is in force.
            let check = IdentityCheck(enrolling: personId, persons: configuration.personIdentities)
            step {
                $0.identityCheck = check
                return $0.peripheralConnected(complete, now: now)
            }
        case .securityManager(let handle, let pdu):
            step { $0.securityManagerPDU(pdu, handle: handle, now: now) }
        case .longTermKeyRequested(let request):
            step { $0.longTermKeyRequested(request, now: now) }
        case .encryptionChanged(let handle, let status, let enabled):
            step { $0.encryptionChanged(handle: handle, status: status, enabled: enabled, now: now) }
        default:
            break
        }
    }

    private func step(_ input: (inout EnrolmentSession) -> [EnrolmentAction]) {
        guard var session = enrolment else { return }
        let actions = input(&session)
        enrolment = session
        for action in actions { perform(action) }
        timer.arm(at: enrolment?.nextDeadline)
    }

    // MARK: Actions

    private func perform(_ action: EnrolmentAction) {
        switch action {
        case .delegatePairing(let delegates):
            dataPath.setDelegatesPeripheralPairing(delegates)
        case .startAdvertising(let advertisement):
            submitInOrder(advertisement.startCommands(family: family))
        case .stopAdvertising:
            submitInOrder([EnrolmentAdvertisement.stopCommand(family: family)])
        case .connected(_, let peer):
            printError("enroll: " + EnrolmentProgress.phoneConnected(peer.address.description))
        case .sendSecurityManager(let handle, let pdu):
            dataPath.sendSecurityManager(pdu, on: handle, now: loop.now)
        case .replyLongTermKey(let handle, let key):
            link.submit(LELongTermKeyRequestReplyCommand(connectionHandle: handle, longTermKey: key), recoverOnTimeout: false) { _, _ in }
        case .rejectLongTermKeyRequest(let handle):
            link.submit(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: handle), recoverOnTimeout: false) { _, _ in }
        case .compareNumericValue(let value):
            askToCompare(value)
        case .turnedAway(let why):
            printError("enroll: " + why.message)
        case .disconnect(let handle):
            droppingHandle = handle
            dataPath.disconnect(handle)
        case .finished(let outcome):
            self.outcome = outcome
            // With a phone's link, the end comes when it is down (its last SMP PDU went
            // first); a controller that never reports it gets two seconds. Without one,
            // the advertising off goes out in that time.
            let linger: Duration = droppingHandle == nil ? .milliseconds(200) : .seconds(2)
            _ = loop.schedule(after: linger) { [unowned self] in
                self.loop.stop()
            }
        }
    }

    /// Advertising commands one after the other; a refusal ends the enrolment.
    private func submitInOrder(_ commands: [(HCIPacket, Opcode)]) {
        link.submitInOrder(commands) { [unowned self] failure in self.stop(failure: failure) }
    }

    private func askToCompare(_ value: UInt32) {
        printError("enroll: " + EnrolmentProgress.compareQuestion(value))
        var line = [UInt8]()
        stdinRegistration = loop.register(fileDescriptor: 0) { [unowned self] in
            var byte: UInt8 = 0
            let count = Glibc.read(0, &byte, 1)
            guard count == 1, byte != UInt8(ascii: "\n") else {
                if let registration = self.stdinRegistration { self.loop.unregister(registration) }
                self.stdinRegistration = nil
                let matches = line.first.map { $0 == UInt8(ascii: "y") || $0 == UInt8(ascii: "Y") } ?? false
                self.step { $0.numericComparisonAnswered(matches: matches, now: self.loop.now) }
                return
            }
            line.append(byte)
        }
    }

    private func stop(failure: String) {
        fatal = fatal ?? failure
        loop.stop()
    }

    // MARK: Output

    private func report(_ outcome: EnrolmentOutcome) -> Bool {
        guard case .enrolled(let pairedBy, let identity) = outcome else {
            EnrolledPersonOutput.printFailure(outcome.message, json: json)
            return false
        }
        EnrolledPersonOutput.print(EnrolmentChannel.Enrolled(
            pairing: pairedBy.rawValue, identityAddress: identity.address.description, identityAddressIsRandom: identity.isRandom,
            irk: identity.irk.map { HexText.lowercase($0.revealed.mostSignificantFirst) }), personId: personId, tagId: tagId, json: json)
        return true
    }
}
