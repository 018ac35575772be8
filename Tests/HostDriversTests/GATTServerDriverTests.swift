import ControllerFixtures
import EventLoop
import HCI
import Host
import XCTest
@testable import HostDrivers

/// The GATT server on a running link (docs/gatt-server.md, "On the link"): a central that
/// connects to us gets a server of its own, its ATT requests are answered over ACL with the
/// link's security (refused before encryption, served after), and the server goes with
/// the link. The controller is a transport in memory, on virtual time.
final class GATTServerDriverTests: XCTestCase {
    private let phone: UInt16 = 0x0041
    private var virtual: VirtualEventLoop!
    private var transport: AnsweringTransport!
    private var link: ControllerDriver!
    private var server: GATTServerDriver!
    private var database: GATTDatabase!

    override func setUpWithError() throws {
        virtual = VirtualEventLoop()
        transport = AnsweringTransport()
        // 27-byte LE ACL packets, 4 of them: the data path may send.
        transport.returnParameters[.leReadBufferSize] = [0x00, 27, 0x00, 4]
        link = ControllerDriver(loop: virtual.loop, transport: transport, configuration: HostConfiguration(), isPermanent: { _ in false })
        let dataPath = DataPathDriver(link: link)
        database = try GATTDatabase.enrolment(deviceName: "door-1", gatewayId: "door-1")
        server = GATTServerDriver(dataPath: dataPath, database: database)
        server.attach()
        // As the link's owner hands things on: the data path hears the controller, the
        // server the data path's peripheral connections.
        link.onStateChanged = { [unowned self] state in self.server.dataPath.hostStateChanged(state, now: self.virtual.loop.now) }
        link.onEvent = { [unowned self] event, now in self.server.dataPath.handle(event, now: now) }
        link.onACLData = { [unowned self] packet, now in self.server.dataPath.receiveACL(packet, now: now) }
        dataPath.onPeripheral = { [unowned self] action, _ in self.server.peripheralAction(action) }
        dataPath.onConnectionClosed = { [unowned self] handle, _, _ in self.server.connectionClosed(handle) }
        link.start()
        try virtual.advance(by: .seconds(1))
        XCTAssertTrue(link.host.isControllerAnswering)
    }

    override func tearDown() {
        link.stop()
        server = nil
        link = nil
        transport = nil
        virtual = nil
    }

    private func event(_ event: HCIEvent) throws {
        transport.inject(event.packet)
        try virtual.runReady()
    }

    private func connect() throws {
        try event(.leMeta(.connectionComplete(LEConnectionComplete(
            connectionHandle: phone, role: .peripheral, peerAddressType: .randomDevice,
            peerAddress: BluetoothAddress(rawValue: 0x7A_11_22_33_44_55), connectionInterval: 0x18,
            peripheralLatency: 0, supervisionTimeout: 0x01F4))))
    }

    /// Sends an ATT PDU from the phone; the ATT PDUs the gateway sent back.
    private func request(_ pdu: [UInt8]) throws -> [[UInt8]] {
        let before = transport.sentData.count
        let frame = L2CAPBasicFrame(connectionHandle: phone, channel: .attribute, payload: pdu).bytes
        transport.inject(ACLDataHeader.packet(handle: phone, boundary: .firstFlushable, data: frame[...]))
        try virtual.runReady()
        return transport.sentData[before...].compactMap { packet in
            guard let (header, data) = try? ACLDataHeader.decode(packet.payload), header.connectionHandle == phone else { return nil }
            var reassembler = ACLReassembler()
            guard let frame = try? reassembler.receive(header, data: data), frame.channel == .attribute else { return nil }
            return frame.payload
        }
    }

    private func read(_ handle: UInt16) throws -> [[UInt8]] {
        try request([0x0A, UInt8(handle & 0xFF), UInt8(handle >> 8)])
    }

    func testARefusedReadBeforeEncryptionIsServedAfterIt() throws {
        try connect()
        XCTAssertEqual(server.security(on: phone)?.level, .unencrypted)
        let manufacturer = try XCTUnwrap(database.valueHandle(service: GATTUUID(uuid16: 0x180A), characteristic: GATTUUID(uuid16: 0x2A29)))
        let low = UInt8(manufacturer & 0xFF), high = UInt8(manufacturer >> 8)

        XCTAssertEqual(try read(manufacturer), [[0x01, 0x0A, low, high, 0x05]], "Insufficient Authentication: the phone pairs")
        try event(.encryptionChange(HCIEncryptionChange(connectionHandle: phone, encryptionEnabled: 1)))
        XCTAssertEqual(server.security(on: phone)?.level, .encrypted)
        XCTAssertEqual(try read(manufacturer), [[0x0B] + Array("beacon-gateway".utf8)])
    }

    func testServicesAreDiscoveredUnencryptedAndTheServerGoesWithTheLink() throws {
        try connect()
        // Read By Group Type Request, primary services over the whole range.
        let answers = try request([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        XCTAssertEqual(answers.count, 1)
        XCTAssertEqual(answers.first?.first, 0x11, "Read By Group Type Response: \(answers)")

        try event(.disconnectionComplete(HCIDisconnectionComplete(status: .success, connectionHandle: phone, reason: .remoteUserTerminated)))
        XCTAssertNil(server.security(on: phone), "no server left for the closed link")
    }

    func testATTOnAHandleNoConnectionOpenedGetsNothing() throws {
        // No LE Connection Complete for it: the data path knows no such link, nothing answers.
        XCTAssertEqual(try request([0x0A, 0x03, 0x00]), [])
    }
}
