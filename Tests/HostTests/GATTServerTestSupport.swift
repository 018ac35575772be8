import EventLoop
@testable import Host

/// Databases and a driver for the GATT server's tests.
enum ServerFixture {
    static let enrolment = try! GATTDatabase.enrolment(deviceName: "door-1", gatewayId: "gw-lobby")

    static let longValue = Array(UInt8(0) ..< 40)
    static let secretUUID = TestUUIDs.uuid("5ec2e7000000400080000000000000aa")

    /// One open service with a characteristic that does everything (handle 3, its
    /// configuration 4), one that needs an authenticated link (a 128-bit UUID, a
    /// 40-byte value at 6, a description at 7), and a second service.
    static let custom = try! GATTDatabase(services: [
        GATTServiceDefinition(uuid: GATTUUID(uuid16: 0xAAAA), characteristics: [
            GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 0xBB01), properties: [.read, .write, .writeWithoutResponse, .notify, .indicate],
                                         value: .variable(initial: .bytes([1, 2, 3]), maxLength: 20)),
            GATTCharacteristicDefinition(uuid: secretUUID, properties: .read, security: .authentication, value: .fixed(longValue),
                                         descriptors: [GATTDescriptorDefinition(uuid: GATTUUID(uuid16: 0x2901), value: Array("long".utf8))]),
        ]),
        GATTServiceDefinition(uuid: GATTUUID(uuid16: 0xAAAB), isPrimary: false, characteristics: []),
    ])

    static func server(_ database: GATTDatabase = enrolment, mtu: Int = 23) -> GATTServer {
        GATTServer(database: database, configuration: .init(mtu: mtu))
    }
}

extension GATTServer {
    /// The one PDU sent in answer to `pdu` (nil when none), the time standing still.
    mutating func answer(_ pdu: [UInt8], _ security: ATTLinkSecurity = .unencrypted) -> [UInt8]? {
        let sent = receive(pdu, security: security, now: .zero).compactMap { if case .send(let bytes) = $0 { bytes } else { nil } }
        precondition(sent.count <= 1, "more than one answer")
        return sent.first
    }
}

/// An Error Response's bytes.
func attError(_ request: UInt8, _ handle: UInt16, _ code: UInt8) -> [UInt8] {
    [0x01, request, UInt8(handle & 0xFF), UInt8(handle >> 8), code]
}

/// `GATTClient` against a `GATTServer`, PDU by PDU, with a fixed latency on a virtual clock.
struct ClientServerPair {
    var client = GATTClient()
    var server: GATTServer
    var security = ATTLinkSecurity.unencrypted
    var now = Instant.zero
    var latency = Duration.milliseconds(15)

    init(server: GATTServer) { self.server = server }

    /// Runs one procedure to its end.
    mutating func run(_ procedure: GATTClient.Procedure) -> Result<GATTClient.Outcome, GATTError>? {
        var queue = client.start(procedure, now: now)
        while !queue.isEmpty {
            switch queue.removeFirst() {
            case .send(let pdu):
                now += latency
                for case .send(let answer) in server.receive(pdu, security: security, now: now) {
                    now += latency
                    queue.append(contentsOf: client.receive(answer, now: now))
                }
            case .completed(let result, _):
                return result
            case .disconnect(let error):
                return .failure(error)
            }
        }
        return nil
    }
}
