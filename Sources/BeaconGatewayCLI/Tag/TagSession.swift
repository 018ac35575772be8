import Advertisements
import BluetoothCrypto
import EventLoop
import HCI
import HCITransport
import Host
import HostDrivers
import Journal
import PresenceProof
import ProofTag

/// The loop behind `beacon-gateway tag`: the controller, its data path, the Presence Proof
/// database served on it through `GATTServerDriver`, and connectable advertising and idle
/// centrals as `TagLinks` decides, so that no central keeps a door from proving the tag.
/// Progress goes to standard error, never a key.
final class TagSession {
    private let tagId: String
    private let key: TagKey
    private let advertising: ConnectableAdvertising
    private let spec: TransportSpec
    private let loop = EventLoop()
    private var link: ControllerDriver!
    private var server: GATTServerDriver!
    private var family = CommandFamily.legacy
    private var challengeHandle: UInt16 = 0
    private var responseHandle: UInt16 = 0
    private var fatal: String?
    /// Nil until the controller is up.
    private var links: TagLinks?
    private var dataPath: DataPathDriver!
    private lazy var timer = DeadlineTimer(loop: loop) { [unowned self] in
        self.step { $0.timerFired(now: self.loop.now) }
    }

    init(tagId: String, key: TagKey, iBeacon: TagIdentity?, transport: TransportSpec, intervalUnits: UInt16) {
        self.tagId = tagId
        self.key = key
        spec = transport
        advertising = ConnectableAdvertising(advertisingData: Self.advertisingData(tagId: tagId, iBeacon: iBeacon),
                                             intervalUnits: intervalUnits, randomAddress: Self.staticAddress(tagId: tagId))
    }

    /// The static random address a tag advertises from: the first six bytes of
    /// SHA-256("BGW-TAG-ADDRESS-v1" ‖ tag id) with the two top bits set (Core Vol 6 Part B
    /// §1.3.2.1), so the same id always gives the address a door configuration names.
    static func staticAddress(tagId: String) -> BluetoothAddress {
        .staticRandom(derivedFrom: Array("BGW-TAG-ADDRESS-v1".utf8) + Array(tagId.utf8))
    }

    /// Flags, then the iBeacon frame when given, else the tag id as the name (shortened to fit).
    static func advertisingData(tagId: String, iBeacon: TagIdentity?) -> [UInt8] {
        var data: [UInt8] = [0x02, 0x01, 0x06]
        if case .iBeacon(let uuid, let major, let minor)? = iBeacon {
            // Apple's frame: company 0x004C, type 0x02, length 0x15, then a measured power
            // of -59 dBm at 1 m (a common beacon's figure; the door does not use it).
            data += [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            data += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
        } else {
            let name = Array(tagId.utf8.prefix(LESetAdvertisingDataCommand.maximumLength - data.count - 2))
            data += [UInt8(name.count + 1), name.count == tagId.utf8.count ? 0x09 : 0x08] + name
        }
        return data
    }

    /// True unless the controller failed.
    func run(limit: Duration?) -> Bool {
        let controller: ControllerSession
        let database: GATTDatabase
        do {
            controller = try ControllerSession(loop: loop, spec: spec, scan: ScanSettings(),
                                               isPermanent: { error in ScanSession.isPermanent(error, replay: false) })
            database = try ProofTag.database(name: tagId)
        } catch {
            printError("tag: \(error)")
            return false
        }
        challengeHandle = database.valueHandle(service: .presenceProofService, characteristic: .proofChallenge) ?? 0
        responseHandle = database.valueHandle(service: .presenceProofService, characteristic: .proofResponse) ?? 0
        link = controller.link
        dataPath = DataPathDriver(link: link)
        server = GATTServerDriver(dataPath: dataPath, database: database)
        server.attach()
        server.writeHandler = { [unowned self] request, _ in self.challengeWritten(request) }
        link.onFatalError = { [unowned self] error in
            self.fatal = self.fatal ?? error.message
            self.loop.stop()
        }
        // Who hears what, in which order (docs/architecture.md): the data path before the
        // tag's advertising, the GATT server before the tag's own lines.
        link.onStateChanged = { [unowned self] state in
            self.server.dataPath.hostStateChanged(state, now: self.loop.now)
            guard case .scanning(let info) = state else { return }
            self.family = info.commandFamily
            // A tag does not scan: the radio is the advertising's and the door's link.
            self.link.setScanningPaused(true)
            self.links = TagLinks(advertisesWhileConnected: info.supportedStates.canAdvertiseConnectableWhilePeripheral)
            self.step(announcing: false) { $0.controllerUp() }
        }
        link.onEvent = { [unowned self] event, now in self.server.dataPath.handle(event, now: now) }
        link.onACLData = { [unowned self] packet, now in self.server.dataPath.receiveACL(packet, now: now) }
        dataPath.onPeripheral = { [unowned self] action, _ in
            self.server.peripheralAction(action)
            guard case .peripheralConnected(let complete) = action else { return }
            printError("tag: a door connected (\(complete.peerAddress)), connection 0x\(String(complete.connectionHandle, radix: 16))")
            self.step { $0.connected(complete.connectionHandle, now: self.loop.now) }
        }
        dataPath.onConnectionClosed = { [unowned self] handle, reason, _ in
            self.server.connectionClosed(handle)
            // After a controller reset the bring-up's end advertises again: one sequence
            // of advertising commands at a time.
            guard case .disconnected(let status) = reason else { return }
            printError("tag: connection 0x\(String(handle, radix: 16)) ended (\(status))")
            self.step { $0.closed(handle) }
        }
        let address = advertising.randomAddress.map(\.description) ?? "?"
        printError("tag: \(tagId) advertising from \(address) (static random); a door names it with address = \"\(address)\"")
        if let failure = controller.run(limit: limit, log: LogSink()) { fatal = fatal ?? failure }
        if let fatal {
            printError("tag: " + fatal)
            return false
        }
        return true
    }

    /// A write to Challenge: answered per docs/proof-protocol.md before the Write Response.
    private func challengeWritten(_ request: GATTServerDriver.WriteRequest) -> ATTErrorCode? {
        guard request.attribute == challengeHandle else { return .writeNotPermitted }
        let (refusal, response) = ProofTag.answer(challenge: request.value, key: key)
        try? server.setValue(response, at: responseHandle, on: request.connection)
        if let refusal {
            printError("tag: challenge refused on connection 0x\(String(request.connection, radix: 16)) (\(refusal))")
        } else {
            printError("tag: challenge answered on connection 0x\(String(request.connection, radix: 16))")
            links?.challengeAnswered(request.connection)
            timer.arm(at: links?.nextDeadline)
        }
        return refusal
    }

    /// `announcing`: say so when advertising starts (not at the controller's start, which
    /// the first line tells).
    private func step(announcing: Bool = true, _ input: (inout TagLinks) -> [TagLinks.Action]) {
        guard var current = links else { return }
        let actions = input(&current)
        links = current
        for action in actions {
            switch action {
            case .advertise:
                if announcing {
                    printError("tag: advertising again" + (current.linkCount > 0 ? " (\(current.linkCount) connected)" : ""))
                }
                advertise()
            case .disconnectIdle(let handle):
                printError("tag: connection 0x\(String(handle, radix: 16)) wrote no challenge within "
                    + "\(current.idleLimit.components.seconds) s: disconnecting it")
                dataPath.disconnect(handle)
            }
        }
        timer.arm(at: links?.nextDeadline)
    }

    private func advertise() {
        link.submitInOrder(advertising.startCommands(family: family)) { [unowned self] failure in
            self.fatal = self.fatal ?? failure
            self.loop.stop()
        }
    }
}
