import EventLoop
import XCTest
@testable import Host

/// The door's own GATT client discovering the server's databases.
final class GATTServerDiscoveryTests: XCTestCase {
    func testTheClientFindsEveryEnrolmentServiceAndCharacteristic() throws {
        var pair = ClientServerPair(server: ServerFixture.server())
        let expected: [(UInt16, GATTHandleRange, [GATTCharacteristic])] = [
            (0x1800, .init(start: 1, end: 5), [
                .init(declarationHandle: 2, properties: 0x02, valueHandle: 3, uuid: GATTUUID(uuid16: 0x2A00)),
                .init(declarationHandle: 4, properties: 0x02, valueHandle: 5, uuid: GATTUUID(uuid16: 0x2A01)),
            ]),
            (0x1801, .init(start: 6, end: 9), [.init(declarationHandle: 7, properties: 0x20, valueHandle: 8, uuid: .serviceChanged)]),
            (0x180A, .init(start: 10, end: 14), [
                .init(declarationHandle: 11, properties: 0x02, valueHandle: 12, uuid: GATTUUID(uuid16: 0x2A29)),
                .init(declarationHandle: 13, properties: 0x02, valueHandle: 14, uuid: GATTUUID(uuid16: 0x2A24)),
            ]),
            (0x180D, .init(start: 15, end: 20), [
                .init(declarationHandle: 16, properties: 0x10, valueHandle: 17, uuid: .heartRateMeasurement),
                .init(declarationHandle: 19, properties: 0x02, valueHandle: 20, uuid: GATTUUID(uuid16: 0x2A38)),
            ]),
        ]
        for (uuid, range, characteristics) in expected {
            XCTAssertEqual(try pair.run(.findPrimaryService(GATTUUID(uuid16: uuid)))?.get(), .service(range))
            XCTAssertEqual(try pair.run(.discoverCharacteristics(in: range, until: []))?.get(), .characteristics(characteristics))
        }
        XCTAssertEqual(try pair.run(.findPrimaryService(TestUUIDs.service))?.get(), .service(nil))
        XCTAssertEqual(try pair.run(.read(handle: 3))?.get(), .value(Array("door-1".utf8)))
        // The phone's first read of Device Information, before pairing: Insufficient Authentication.
        XCTAssertEqual(pair.run(.read(handle: 12)), .failure(.attError(request: .readRequest, handle: 12, code: .insufficientAuthentication)))
        pair.security = .encrypted
        XCTAssertEqual(try pair.run(.read(handle: 12))?.get(), .value(Array("beacon-gateway".utf8)))
        XCTAssertFalse(pair.client.bearer.isClosed)
    }

    func testTheClientWritesAndReadsThroughTheApplication() throws {
        var pair = ClientServerPair(server: ServerFixture.server(ServerFixture.custom))
        let service = try XCTUnwrap(pair.run(.findPrimaryService(GATTUUID(uuid16: 0xAAAA)))?.get())
        XCTAssertEqual(service, .service(.init(start: 1, end: 7)))
        // The server holds the answer until the application gives it: the client waits, then times out.
        XCTAssertNil(pair.run(.write(handle: 3, value: [9])))
        XCTAssertTrue(pair.server.isWaitingForWrite)
        pair.now += .seconds(5)
        XCTAssertEqual(pair.client.timerFired(now: pair.now).first, .completed(.failure(.timeout), requests: 1))
    }
}
