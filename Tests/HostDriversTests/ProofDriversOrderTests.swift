import ControllerFixtures
import EventLoop
import PresenceProof
import HCI
import Host
import XCTest
@testable import HostDrivers

/// The order `ProofDrivers` writes (docs/architecture.md, "Who hears what, in which
/// order"): what the controller reports reaches the data path before the connect
/// scheduler. So a connection is on the data path when the scheduler reports it, and a
/// handshake on a connection that ends has its verdict before the scheduler reports the
/// link lost. The controller is a transport in memory, on virtual time.
final class ProofDriversOrderTests: XCTestCase {
    private let tag = BluetoothAddress(rawValue: 0xC0_11_22_33_44_55)
    private let handle: UInt16 = 0x0040
    private var virtual: VirtualEventLoop!
    private var transport: AnsweringTransport!
    private var link: ControllerDriver!
    private var proofs: ProofDrivers!
    /// What the parties reported, in the order they reported it.
    private var heard: [String] = []

    override func setUp() {
        virtual = VirtualEventLoop()
        transport = AnsweringTransport()
        // 27-byte LE ACL packets, 4 of them: the data path may send.
        transport.returnParameters[.leReadBufferSize] = [0x00, 27, 0x00, 4]
        link = ControllerDriver(loop: virtual.loop, transport: transport, configuration: HostConfiguration(), isPermanent: { _ in false })
        proofs = ProofDrivers(link: link, configuration: ConnectScheduler.Configuration(mode: .acceptList, maxConnections: 1),
                              activeScanning: false)
        heard = []
        // As `prove` hands things on: the link's happenings to the proof drivers alone.
        link.onStateChanged = { [unowned self] state in self.proofs.hostStateChanged(state) }
        link.onEvent = { [unowned self] event, now in self.proofs.handle(event, now: now) }
        link.onACLData = { [unowned self] packet, now in self.proofs.receiveACL(packet, now: now) }
        proofs.dataPath.onConnectionClosed = { [unowned self] handle, reason, _ in self.proofs.connectionClosed(handle, reason: reason) }
        proofs.connect.onConnected = { [unowned self] _, handle, now in
            self.heard.append("connected, on the data path: \(self.proofs.dataPath.dataPath.isOpen(handle))")
            self.proofs.startProof(on: handle, tagId: "t1", key: TagKey(bytes: Array(repeating: 7, count: 32))!,
                                   cachedHandles: nil, at: now)
        }
        proofs.connect.onConnectionLost = { [unowned self] _, _, _, _ in self.heard.append("link lost") }
        proofs.runner.onFinished = { [unowned self] outcome, _ in self.heard.append("proof: \(outcome.failure?.name ?? "valid")") }
    }

    override func tearDown() {
        link.stop()
        proofs = nil
        link = nil
        transport = nil
        virtual = nil
    }

    /// Scanning, the tag wanted, its connection complete and a handshake started on it.
    private func connectAndStartProof() throws {
        link.start()
        try virtual.advance(by: .seconds(1))
        XCTAssertTrue(link.host.isControllerAnswering)
        proofs.connect.want(tagIndex: 0, peer: ConnectPeer(address: tag, addressType: .publicDevice))
        try virtual.runReady()
        transport.inject(HCIEvent.leMeta(.connectionComplete(LEConnectionComplete(
            connectionHandle: handle, role: .central, peerAddressType: .publicDevice, peerAddress: tag,
            connectionInterval: 0x18, peripheralLatency: 0, supervisionTimeout: 0x01F4))).packet)
        try virtual.runReady()
        XCTAssertEqual(heard, ["connected, on the data path: true"])
        XCTAssertEqual(proofs.runner.runningHandles, [handle])
    }

    func testTheDataPathHearsAConnectionEndBeforeTheConnectScheduler() throws {
        try connectAndStartProof()
        transport.inject(HCIEvent.disconnectionComplete(HCIDisconnectionComplete(connectionHandle: handle, reason: .connectionTimeout)).packet)
        try virtual.runReady()
        XCTAssertEqual(heard, ["connected, on the data path: true", "proof: disconnected", "link lost"])
    }

    func testTheDataPathHearsAControllerResetBeforeTheConnectScheduler() throws {
        try connectAndStartProof()
        // The transport fails: the host recovers, which ends every connection.
        transport.failNextReceive = true
        try virtual.runReady()
        XCTAssertEqual(heard, ["connected, on the data path: true", "proof: controller_reset", "link lost"])
    }
}
