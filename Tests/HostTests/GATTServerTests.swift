import EventLoop
import XCTest
@testable import Host

/// The GATT server request by request, with every error path (docs/gatt-server.md).
final class GATTServerTests: XCTestCase {
    func testHandlesFollowTheDeclarationOrder() {
        let database = ServerFixture.enrolment
        XCTAssertEqual(database.lastHandle, 20)
        XCTAssertEqual(database.valueHandle(service: .heartRateService, characteristic: .heartRateMeasurement), 17)
        XCTAssertEqual(database.attribute(18)?.type, .clientCharacteristicConfiguration)
        XCTAssertEqual(database.attribute(15)?.kind, .service(end: 20, value: [0x0D, 0x18]))
        XCTAssertNil(database.attribute(0))
        XCTAssertNil(database.attribute(21))
        // The same definition, the same handles.
        XCTAssertEqual(try GATTDatabase.enrolment(deviceName: "door-1", gatewayId: "gw-lobby"), database)
    }

    func testDefinitionsTheServerCannotServeAreRefused() {
        let long = GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 1), properties: .read, value: .fixed(Array(repeating: 0, count: 513)))
        XCTAssertThrowsError(try GATTDatabase(services: [GATTServiceDefinition(uuid: GATTUUID(uuid16: 2), characteristics: [long])]))
        let broadcast = GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 1), properties: GATTCharacteristicProperties(rawValue: 0x01), value: .fixed([]))
        XCTAssertThrowsError(try GATTDatabase(services: [GATTServiceDefinition(uuid: GATTUUID(uuid16: 2), characteristics: [broadcast])]))
        let ownCCCD = GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 1), properties: .read, value: .fixed([]),
                                                   descriptors: [GATTDescriptorDefinition(uuid: .clientCharacteristicConfiguration, value: [0, 0])])
        XCTAssertThrowsError(try GATTDatabase(services: [GATTServiceDefinition(uuid: GATTUUID(uuid16: 2), characteristics: [ownCCCD])]))
        let tooLongInitial = GATTCharacteristicDefinition(uuid: GATTUUID(uuid16: 1), properties: .read, value: .variable(initial: .bytes([1, 2]), maxLength: 1))
        XCTAssertThrowsError(try GATTDatabase(services: [GATTServiceDefinition(uuid: GATTUUID(uuid16: 2), characteristics: [tooLongInitial])]))
    }

    func testDeviceNameIsCutOnACharacterBoundary() throws {
        let name = String(repeating: "é", count: 200)  // 400 bytes of UTF-8
        let database = try GATTDatabase(services: [.genericAccess(deviceName: name, appearance: 0)])
        guard case .value(.fixed(let value), _, _, _)? = database.attribute(3)?.kind else { return XCTFail("no device name") }
        XCTAssertEqual(value.count, 248)
        XCTAssertEqual(String(decoding: value, as: UTF8.self), String(repeating: "é", count: 124))
    }

    func testExchangeMTUIsBoundedAndSetOnce() {
        var server = ServerFixture.server(mtu: 185)
        XCTAssertEqual(server.receive([0x02, 0x00, 0x02], security: .unencrypted, now: .zero), [.send([0x03, 185, 0]), .mtuExchanged(185)])
        XCTAssertEqual(server.mtu, 185)
        XCTAssertEqual(server.receive([0x02, 30, 0], security: .unencrypted, now: .zero), [.send([0x03, 185, 0])])
        XCTAssertEqual(server.mtu, 185)

        var small = ServerFixture.server(mtu: 185)
        XCTAssertEqual(small.receive([0x02, 10, 0], security: .unencrypted, now: .zero), [.send([0x03, 185, 0]), .mtuExchanged(23)])
        XCTAssertEqual(small.answer([0x02, 10]), attError(0x02, 0, 0x04))
        XCTAssertEqual(small.answer([0x02, 10, 0, 0]), attError(0x02, 0, 0x04))
        XCTAssertEqual(GATTServer.Configuration(mtu: 5000).mtu, 517)
        XCTAssertEqual(GATTServer.Configuration(mtu: 5).mtu, 23)
    }

    func testPrimaryServiceDiscoveryByGroupType() {
        var server = ServerFixture.server()
        XCTAssertEqual(server.answer([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]),
                       [0x11, 6, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x09, 0x00, 0x01, 0x18, 0x0A, 0x00, 0x0E, 0x00, 0x0A, 0x18])
        XCTAssertEqual(server.answer([0x10, 0x0F, 0x00, 0xFF, 0xFF, 0x00, 0x28]), [0x11, 6, 0x0F, 0x00, 0x14, 0x00, 0x0D, 0x18])
        XCTAssertEqual(server.answer([0x10, 0x15, 0x00, 0xFF, 0xFF, 0x00, 0x28]), attError(0x10, 0x15, 0x0A))
        // The 128-bit form of 0x2800 is the same group type.
        XCTAssertEqual(server.answer([0x10, 0x0F, 0x00, 0xFF, 0xFF] + GATTUUID.primaryService.bytes.reversed()), [0x11, 6, 0x0F, 0x00, 0x14, 0x00, 0x0D, 0x18])
        XCTAssertEqual(server.answer([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]), attError(0x10, 0x01, 0x10))
        XCTAssertEqual(server.answer([0x10, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x28]), attError(0x10, 0x00, 0x01))
        XCTAssertEqual(server.answer([0x10, 0x05, 0x00, 0x04, 0x00, 0x00, 0x28]), attError(0x10, 0x05, 0x01))
        XCTAssertEqual(server.answer([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00]), attError(0x10, 0x00, 0x04))
        XCTAssertEqual(server.answer([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x00]), attError(0x10, 0x00, 0x04))

        var custom = ServerFixture.server(ServerFixture.custom)
        XCTAssertEqual(custom.answer([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x28]), [0x11, 6, 0x08, 0x00, 0x08, 0x00, 0xAB, 0xAA])
    }

    func testFindByTypeValue() {
        var server = ServerFixture.server()
        XCTAssertEqual(server.answer([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18]), [0x07, 0x0F, 0x00, 0x14, 0x00])
        XCTAssertEqual(server.answer([0x06, 0x10, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18]), attError(0x06, 0x10, 0x0A))
        XCTAssertEqual(server.answer([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0F, 0x18]), attError(0x06, 0x01, 0x0A))
        // A non-grouping attribute's group end is itself.
        XCTAssertEqual(server.answer([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x2A] + Array("door-1".utf8)), [0x07, 0x03, 0x00, 0x03, 0x00])
        XCTAssertEqual(server.answer([0x06, 0x02, 0x00, 0x01, 0x00, 0x00, 0x28]), attError(0x06, 0x02, 0x01))
        XCTAssertEqual(server.answer([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00]), attError(0x06, 0x00, 0x04))
    }

    func testFindInformationKeepsOneUUIDSize() {
        var server = ServerFixture.server(ServerFixture.custom)
        XCTAssertEqual(server.answer([0x04, 0x01, 0x00, 0xFF, 0xFF]),
                       [0x05, 0x01, 0x01, 0x00, 0x00, 0x28, 0x02, 0x00, 0x03, 0x28, 0x03, 0x00, 0x01, 0xBB, 0x04, 0x00, 0x02, 0x29, 0x05, 0x00, 0x03, 0x28])
        XCTAssertEqual(server.answer([0x04, 0x06, 0x00, 0xFF, 0xFF]), [0x05, 0x02, 0x06, 0x00] + ServerFixture.secretUUID.bytes.reversed())
        XCTAssertEqual(server.answer([0x04, 0x09, 0x00, 0xFF, 0xFF]), attError(0x04, 0x09, 0x0A))
        XCTAssertEqual(server.answer([0x04, 0x00, 0x00, 0xFF, 0xFF]), attError(0x04, 0x00, 0x01))
        XCTAssertEqual(server.answer([0x04, 0x01, 0x00, 0xFF]), attError(0x04, 0x00, 0x04))
        XCTAssertEqual(server.answer([0x04, 0x01, 0x00, 0xFF, 0xFF, 0x00]), attError(0x04, 0x00, 0x04))
    }

    func testReadByTypeStopsAtADifferentLengthAndAtARefusal() {
        var server = ServerFixture.server()
        XCTAssertEqual(server.answer([0x08, 0x0F, 0x00, 0x14, 0x00, 0x03, 0x28]),
                       [0x09, 7, 0x10, 0x00, 0x10, 0x11, 0x00, 0x37, 0x2A, 0x13, 0x00, 0x02, 0x14, 0x00, 0x38, 0x2A])
        XCTAssertEqual(server.answer([0x08, 0x15, 0x00, 0xFF, 0xFF, 0x03, 0x28]), attError(0x08, 0x15, 0x0A))

        var custom = ServerFixture.server(ServerFixture.custom)
        // A 5-byte declaration value, then a 19-byte one: only the first.
        XCTAssertEqual(custom.answer([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]), [0x09, 7, 0x02, 0x00, 0x3E, 0x03, 0x00, 0x01, 0xBB])
        // The first match refused: its error, with its handle.
        XCTAssertEqual(custom.answer([0x08, 0x01, 0x00, 0xFF, 0xFF] + ServerFixture.secretUUID.bytes.reversed()), attError(0x08, 0x06, 0x05))
        // Cut to ATT_MTU - 4.
        XCTAssertEqual(custom.answer([0x08, 0x01, 0x00, 0xFF, 0xFF] + ServerFixture.secretUUID.bytes.reversed(), .authenticated),
                       [0x09, 21, 0x06, 0x00] + Array(ServerFixture.longValue.prefix(19)))
        XCTAssertEqual(custom.answer([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03]), attError(0x08, 0x00, 0x04))
        XCTAssertEqual(custom.answer([0x08, 0x03, 0x00, 0x02, 0x00, 0x03, 0x28]), attError(0x08, 0x03, 0x01))
    }

    func testEncryptedCharacteristicsNeedAnEncryptedLink() {
        var server = ServerFixture.server()
        let manufacturer = Array("beacon-gateway".utf8)
        XCTAssertEqual(server.answer([0x0A, 0x0C, 0x00]), attError(0x0A, 0x0C, 0x05))
        XCTAssertEqual(server.answer([0x0A, 0x0C, 0x00], ATTLinkSecurity(level: .unencrypted, peerHasLongTermKey: true)), attError(0x0A, 0x0C, 0x0F))
        XCTAssertEqual(server.answer([0x0A, 0x0C, 0x00], .encrypted), [0x0B] + manufacturer)
        XCTAssertEqual(server.answer([0x0A, 0x0E, 0x00], .encrypted), [0x0B] + Array("gw-lobby".utf8))
        XCTAssertEqual(server.answer([0x0A, 0x14, 0x00]), attError(0x0A, 0x14, 0x05))
        XCTAssertEqual(server.answer([0x0A, 0x14, 0x00], .encrypted), [0x0B, 0x00])
        XCTAssertEqual(server.answer([0x08, 0x0A, 0x00, 0xFF, 0xFF, 0x29, 0x2A]), attError(0x08, 0x0C, 0x05))
        // Not even a match by value tells an encrypted value.
        XCTAssertEqual(server.answer([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x29, 0x2A] + manufacturer), attError(0x06, 0x01, 0x0A))
        XCTAssertEqual(server.answer([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x29, 0x2A] + manufacturer, .encrypted), [0x07, 0x0C, 0x00, 0x0C, 0x00])
        // Subscribing to Heart Rate Measurement is what makes a phone pair.
        XCTAssertEqual(server.answer([0x12, 0x12, 0x00, 0x01, 0x00]), attError(0x12, 0x12, 0x05))
        XCTAssertEqual(server.receive([0x12, 0x12, 0x00, 0x01, 0x00], security: .encrypted, now: .zero),
                       [.send([0x13]), .subscriptionChanged(valueHandle: 0x11, .notifications)])
        // GAP is open.
        XCTAssertEqual(server.answer([0x0A, 0x03, 0x00]), [0x0B] + Array("door-1".utf8))
        XCTAssertEqual(server.answer([0x0A, 0x05, 0x00]), [0x0B, 0x40, 0x03])

        var custom = ServerFixture.server(ServerFixture.custom)
        XCTAssertEqual(custom.answer([0x0A, 0x06, 0x00], .encrypted), attError(0x0A, 0x06, 0x05))
        XCTAssertEqual(custom.answer([0x0A, 0x07, 0x00], .encrypted), attError(0x0A, 0x07, 0x05))
        XCTAssertEqual(custom.answer([0x0A, 0x07, 0x00], .authenticated), [0x0B] + Array("long".utf8))
    }

    func testReadAndReadBlob() {
        var server = ServerFixture.server(ServerFixture.custom)
        let value = ServerFixture.longValue
        XCTAssertEqual(server.answer([0x0A, 0x06, 0x00], .authenticated), [0x0B] + Array(value.prefix(22)))
        XCTAssertEqual(server.answer([0x0C, 0x06, 0x00, 22, 0x00], .authenticated), [0x0D] + Array(value[22...]))
        XCTAssertEqual(server.answer([0x0C, 0x06, 0x00, 40, 0x00], .authenticated), [0x0D])
        XCTAssertEqual(server.answer([0x0C, 0x06, 0x00, 41, 0x00], .authenticated), attError(0x0C, 0x06, 0x07))
        XCTAssertEqual(server.answer([0x0C, 0x06, 0x00, 41, 0x00]), attError(0x0C, 0x06, 0x05))
        XCTAssertEqual(server.answer([0x0A, 0x03, 0x00]), [0x0B, 1, 2, 3])
        XCTAssertEqual(server.answer([0x0A, 0x00, 0x00]), attError(0x0A, 0x00, 0x01))
        XCTAssertEqual(server.answer([0x0A, 0x09, 0x00]), attError(0x0A, 0x09, 0x01))
        XCTAssertEqual(server.answer([0x0A, 0x03]), attError(0x0A, 0x00, 0x04))
        XCTAssertEqual(server.answer([0x0A, 0x03, 0x00, 0x00]), attError(0x0A, 0x00, 0x04))
        XCTAssertEqual(server.answer([0x0C, 0x06, 0x00, 0x01]), attError(0x0C, 0x00, 0x04))

        var enrolment = ServerFixture.server()
        // Notify only: not readable however secure the link.
        XCTAssertEqual(enrolment.answer([0x0A, 0x11, 0x00], .authenticated), attError(0x0A, 0x11, 0x02))
    }

    func testReadMultiple() {
        var server = ServerFixture.server()
        XCTAssertEqual(server.answer([0x0E, 0x03, 0x00, 0x05, 0x00]), [0x0F] + Array("door-1".utf8) + [0x40, 0x03])
        XCTAssertEqual(server.answer([0x0E, 0x03, 0x00, 0x30, 0x00]), attError(0x0E, 0x30, 0x01))
        XCTAssertEqual(server.answer([0x0E, 0x03, 0x00, 0x0C, 0x00]), attError(0x0E, 0x0C, 0x05))
        XCTAssertEqual(server.answer([0x0E, 0x03, 0x00]), attError(0x0E, 0x00, 0x04))
        XCTAssertEqual(server.answer([0x0E, 0x03, 0x00, 0x05]), attError(0x0E, 0x00, 0x04))
        // Cut to ATT_MTU - 1.
        XCTAssertEqual(server.answer([0x0E, 0x03, 0x00, 0x03, 0x00, 0x03, 0x00, 0x03, 0x00])?.count, 23)
    }

    func testWritesAreTheApplicationsToAnswer() {
        var server = ServerFixture.server(ServerFixture.custom, mtu: 64)
        XCTAssertEqual(server.receive([0x02, 64, 0], security: .unencrypted, now: .zero), [.send([0x03, 64, 0]), .mtuExchanged(64)])
        XCTAssertEqual(server.receive([0x12, 0x03, 0x00, 9, 9], security: .unencrypted, now: .zero), [.writeRequested(handle: 3, value: [9, 9])])
        XCTAssertTrue(server.isWaitingForWrite)
        // A second request before the answer breaks ATT's one-at-a-time rule: dropped.
        XCTAssertEqual(server.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: .zero), [])
        XCTAssertEqual(server.counters.requestsWhileWriting, 1)
        XCTAssertEqual(server.completeWrite(error: nil), [.send([0x13])])
        XCTAssertEqual(server.completeWrite(error: nil), [])
        // Nothing is stored by the server; the application sets values.
        XCTAssertEqual(server.answer([0x0A, 0x03, 0x00]), [0x0B, 1, 2, 3])
        XCTAssertNoThrow(try server.setValue(.bytes([7]), at: 3))
        XCTAssertEqual(server.answer([0x0A, 0x03, 0x00]), [0x0B, 7])
        XCTAssertThrowsError(try server.setValue(.bytes(Array(repeating: 0, count: 21)), at: 3))
        XCTAssertThrowsError(try server.setValue(.bytes([1]), at: 6))
        XCTAssertNoThrow(try server.setValue(.unavailable(.unlikelyError), at: 3))
        XCTAssertEqual(server.answer([0x0A, 0x03, 0x00]), attError(0x0A, 0x03, 0x0E))

        _ = server.receive([0x12, 0x03, 0x00, 1], security: .unencrypted, now: .zero)
        XCTAssertEqual(server.completeWrite(error: .valueNotAllowed), [.send(attError(0x12, 0x03, 0x13))])

        XCTAssertEqual(server.answer([0x12, 0x03, 0x00] + Array(repeating: 0, count: 21)), attError(0x12, 0x03, 0x0D))
        XCTAssertEqual(server.answer([0x12, 0x06, 0x00, 1], .authenticated), attError(0x12, 0x06, 0x03))
        XCTAssertEqual(server.answer([0x12, 0x02, 0x00, 1]), attError(0x12, 0x02, 0x03))
        XCTAssertEqual(server.answer([0x12, 0x01, 0x00, 1]), attError(0x12, 0x01, 0x03))
        XCTAssertEqual(server.answer([0x12, 0x40, 0x00, 1]), attError(0x12, 0x40, 0x01))
        XCTAssertEqual(server.answer([0x12, 0x03]), attError(0x12, 0x00, 0x04))

        // Commands: passed on when valid, dropped without a word otherwise.
        XCTAssertEqual(server.receive([0x52, 0x03, 0x00, 5], security: .unencrypted, now: .zero), [.writeCommand(handle: 3, value: [5])])
        for command: [UInt8] in [[0x52, 0x06, 0x00, 5], [0x52, 0x40, 0x00], [0x52, 0x03], [0xD2, 0x03, 0x00, 5] + Array(repeating: 0, count: 12), [0x7F]] {
            XCTAssertEqual(server.receive(command, security: .unencrypted, now: .zero), [], "\(command)")
        }
        XCTAssertEqual(server.counters.commandsDropped, 5)
    }

    func testClientCharacteristicConfiguration() {
        var server = ServerFixture.server(ServerFixture.custom)
        XCTAssertEqual(server.answer([0x0A, 0x04, 0x00]), [0x0B, 0x00, 0x00])
        XCTAssertEqual(server.receive([0x12, 0x04, 0x00, 0x01, 0x00], security: .unencrypted, now: .zero),
                       [.send([0x13]), .subscriptionChanged(valueHandle: 3, .notifications)])
        XCTAssertEqual(server.receive([0x12, 0x04, 0x00, 0x01, 0x00], security: .unencrypted, now: .zero), [.send([0x13])])
        // Reserved bits are ignored.
        XCTAssertEqual(server.receive([0x12, 0x04, 0x00, 0x07, 0x80], security: .unencrypted, now: .zero),
                       [.send([0x13]), .subscriptionChanged(valueHandle: 3, [.notifications, .indications])])
        XCTAssertEqual(server.answer([0x0A, 0x04, 0x00]), [0x0B, 0x03, 0x00])
        XCTAssertEqual(server.answer([0x12, 0x04, 0x00, 0x01]), attError(0x12, 0x04, 0x0D))
        XCTAssertEqual(server.answer([0x12, 0x04, 0x00, 0x01, 0x00, 0x00]), attError(0x12, 0x04, 0x0D))
        XCTAssertEqual(server.receive([0x52, 0x04, 0x00, 0x00, 0x00], security: .unencrypted, now: .zero),
                       [.subscriptionChanged(valueHandle: 3, [])])

        var enrolment = ServerFixture.server()
        // Heart Rate Measurement notifies and never indicates.
        XCTAssertEqual(enrolment.answer([0x12, 0x12, 0x00, 0x02, 0x00], .encrypted), attError(0x12, 0x12, 0xFD))
    }

    func testNotificationsAndTheOneOutstandingIndication() throws {
        var server = ServerFixture.server(ServerFixture.custom)
        XCTAssertThrowsError(try server.notify(handle: 3, value: [1], security: .unencrypted)) {
            XCTAssertEqual($0 as? GATTServerError, .notSubscribed(3))
        }
        XCTAssertThrowsError(try server.notify(handle: 6, value: [1], security: .authenticated)) {
            XCTAssertEqual($0 as? GATTServerError, .notUpdatable(6))
        }
        _ = server.receive([0x12, 0x04, 0x00, 0x03, 0x00], security: .unencrypted, now: .zero)
        let value = Array(UInt8(0) ..< 30)
        XCTAssertEqual(try server.notify(handle: 3, value: value, security: .unencrypted), [.send([0x1B, 0x03, 0x00] + Array(value.prefix(20)))])
        let start = Instant.zero + .seconds(1)
        XCTAssertEqual(try server.indicate(handle: 3, value: [4], security: .unencrypted, now: start), [.send([0x1D, 0x03, 0x00, 4])])
        XCTAssertThrowsError(try server.indicate(handle: 3, value: [5], security: .unencrypted, now: start)) {
            XCTAssertEqual($0 as? GATTServerError, .indicationOutstanding)
        }
        XCTAssertEqual(server.nextDeadline, start + .seconds(30))
        XCTAssertEqual(server.receive([0x1E, 0x00], security: .unencrypted, now: start), [])
        XCTAssertEqual(server.receive([0x1E], security: .unencrypted, now: start), [.indicationConfirmed(valueHandle: 3)])
        XCTAssertEqual(server.receive([0x1E], security: .unencrypted, now: start), [])
        XCTAssertNil(server.nextDeadline)
        XCTAssertEqual(try server.indicate(handle: 3, value: [6], security: .unencrypted, now: start), [.send([0x1D, 0x03, 0x00, 6])])
        XCTAssertEqual(server.timerFired(now: start + .seconds(29)), [])
        XCTAssertEqual(server.timerFired(now: start + .seconds(30)), [.close(.indicationNotConfirmed)])
        XCTAssertTrue(server.isClosed)
        XCTAssertEqual(server.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: start + .seconds(31)), [])
        XCTAssertThrowsError(try server.notify(handle: 3, value: [1], security: .unencrypted))

        var enrolment = ServerFixture.server()
        _ = enrolment.receive([0x12, 0x12, 0x00, 0x01, 0x00], security: .encrypted, now: .zero)
        XCTAssertThrowsError(try enrolment.notify(handle: 0x11, value: [0, 60], security: .unencrypted)) {
            XCTAssertEqual($0 as? GATTServerError, .insufficientSecurity(0x11))
        }
        XCTAssertEqual(try enrolment.notify(handle: 0x11, value: [0, 60], security: .encrypted), [.send([0x1B, 0x11, 0x00, 0, 60])])
    }

    func testRequestsNotServedAndPDUsNotForAServer() {
        var server = ServerFixture.server()
        XCTAssertEqual(server.answer([0x16, 0x03, 0x00, 0x00, 0x00, 1]), attError(0x16, 0, 0x06))
        XCTAssertEqual(server.answer([0x18, 0x01]), attError(0x18, 0, 0x06))
        XCTAssertEqual(server.answer([0x20, 0x03, 0x00, 0x05, 0x00]), attError(0x20, 0, 0x06))
        XCTAssertEqual(server.answer([0x3E]), attError(0x3E, 0, 0x06))
        for pdu: [UInt8] in [[], [0x0B, 1], [0x01, 0x0A, 0x03, 0x00, 0x01], [0x1B, 0x03, 0x00, 1], [0x1D, 0x03], [0x13]] {
            XCTAssertNil(server.answer(pdu), "\(pdu)")
        }
        // The peer's own server indicating gets its confirmation.
        XCTAssertEqual(server.answer([0x1D, 0x03, 0x00, 1]), [0x1E])
        // Longer than ATT_MTU: an invalid PDU, whatever it asks.
        XCTAssertEqual(server.answer([0x12, 0x03, 0x00] + Array(repeating: 0, count: 21)), attError(0x12, 0, 0x04))
    }

    func testAFloodingCentralGetsTheBearerClosed() {
        var server = ServerFixture.server()
        for index in 0 ..< 64 {
            XCTAssertNotNil(server.answer([0x0A, 0x03, 0x00]), "request \(index)")
        }
        XCTAssertEqual(server.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: .zero), [.close(.flooded)])
        XCTAssertEqual(server.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: .zero + .seconds(10)), [])

        // A central that waits for its answers, even one per 7.5 ms connection event, never gets there.
        var patient = ServerFixture.server()
        var now = Instant.zero
        for _ in 0 ..< 10_000 {
            now += .microseconds(7_500)
            XCTAssertEqual(patient.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: now).count, 1)
        }
        XCTAssertFalse(patient.isClosed)
        // Nor does time running backwards open the gate.
        var backwards = ServerFixture.server()
        for step in 0 ..< 64 { _ = backwards.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: .zero + .seconds(Int64(100 - step))) }
        XCTAssertTrue(backwards.receive([0x0A, 0x03, 0x00], security: .unencrypted, now: .zero).contains(.close(.flooded)))
    }
}
