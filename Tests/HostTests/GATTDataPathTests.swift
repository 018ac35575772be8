import EventLoop
import HCI
import SplitMix
import XCTest
@testable import Host

/// The whole data path: HCI events and ACL in, ACL out, against a GATT server behind a
/// simulated controller that returns credits only when told to.
final class GATTDataPathTests: XCTestCase {
    private let handle: UInt16 = 0x0040

    private func scanning(length: Int = 27, count: Int = 2) -> HostState {
        .scanning(ControllerInfo(leBuffer: ACLBufferInfo(packetLength: length, packetCount: count, isShared: false)))
    }

    private func connected(_ handle: UInt16) -> HCIEvent {
        .leMeta(.connectionComplete(LEConnectionComplete(connectionHandle: handle, peerAddressType: .randomDevice,
                                                         peerAddress: BluetoothAddress(rawValue: 0xC011_2233_4455))))
    }

    /// The peer's side: joins our fragments into L2CAP frames, answers ATT through the
    /// server, and fragments its answers (first-flushable, then continuing).
    struct Peer {
        var server = FakeGATTServer()
        var reassembler = ACLReassembler()
        var received: [L2CAPBasicFrame] = []

        mutating func receive(_ packet: HCIPacket, fragmentLength: Int = 27) -> [HCIPacket] {
            guard let (header, data) = try? ACLDataHeader.decode(packet.payload),
                  let frame = try? reassembler.receive(header, data: data) else { return [] }
            received.append(frame)
            guard frame.channel == .attribute else { return [] }
            return server.answer(frame.payload).flatMap { answer in
                Self.fragments(L2CAPBasicFrame(connectionHandle: header.connectionHandle, channel: .attribute, payload: answer).bytes,
                               handle: header.connectionHandle, length: fragmentLength)
            }
        }

        static func fragments(_ bytes: [UInt8], handle: UInt16, length: Int) -> [HCIPacket] {
            stride(from: 0, to: bytes.count, by: length).map { start in
                ACLDataHeader.packet(handle: handle, boundary: start == 0 ? .firstFlushable : .continuing,
                                     data: bytes[start ..< min(start + length, bytes.count)])
            }
        }
    }

    /// Delivers everything we send to the peer, completes each packet at once, feeds the
    /// answers back; returns the non-ACL actions.
    private func pump(_ path: inout LEDataPath, _ peer: inout Peer, _ first: [LEDataPath.Action],
                      now: Instant = .zero, completePackets: Bool = true) -> [LEDataPath.Action] {
        var queue = first
        var others = [LEDataPath.Action]()
        while !queue.isEmpty {
            let action = queue.removeFirst()
            guard case .sendACL(let packet) = action else {
                others.append(action)
                continue
            }
            let (header, _) = try! ACLDataHeader.decode(packet.payload)
            XCTAssertLessThanOrEqual(packet.payload.count - 4, path.flow.packetLength)
            let answers = peer.receive(packet)
            if completePackets {
                queue.append(contentsOf: path.handle(.numberOfCompletedPackets([HCICompletedPackets(connectionHandle: header.connectionHandle, count: 1)]), now: now))
            }
            for answer in answers { queue.append(contentsOf: path.receiveACL(answer, now: now)) }
        }
        return others
    }

    func testExchangeEndToEndWithFragmentationAndCredits() throws {
        var path = LEDataPath()
        var peer = Peer()
        XCTAssertEqual(path.hostStateChanged(scanning(length: 27, count: 2)), [])
        XCTAssertEqual(path.handle(connected(handle), now: .zero), [])
        let request = ExchangeHarness.request()
        let actions = pump(&path, &peer, path.startExchange(request, on: handle, now: .zero))
        guard case .exchangeFinished(let h, .success(let completion))? = actions.last else {
            return XCTFail("\(actions)")
        }
        XCTAssertEqual(h, handle)
        XCTAssertEqual(completion.value, Array((1 ... 17).reversed()))
        XCTAssertEqual(completion.attRequests, 5)
        // At ATT MTU 23 every request fits one 27-byte fragment; every credit came back.
        XCTAssertEqual(path.flow.availableCredits, 2)
        XCTAssertEqual(path.flow.counters.fragmentsSent, 5)
        XCTAssertEqual(path.reassembler.counters.fragmentsJoined, 0)
    }

    func testIncomingFragmentsAreJoined() throws {
        var path = LEDataPath()
        var peer = Peer()
        _ = path.hostStateChanged(scanning())
        path.connectionOpened(handle)
        // A peer sending 10-byte fragments.
        var queue = path.startExchange(ExchangeHarness.request(cached: .init(write: 0x12, read: 0x14)), on: handle, now: .zero)
        var finished: LEDataPath.Action?
        while !queue.isEmpty {
            let action = queue.removeFirst()
            if case .sendACL(let packet) = action {
                queue.append(contentsOf: path.handle(.numberOfCompletedPackets([.init(connectionHandle: handle, count: 1)]), now: .zero))
                for answer in peer.receive(packet, fragmentLength: 10) { queue.append(contentsOf: path.receiveACL(answer, now: .zero)) }
            } else {
                finished = action
            }
        }
        guard case .exchangeFinished(_, .success(let completion))? = finished else { return XCTFail("\(String(describing: finished))") }
        XCTAssertEqual(completion.attRequests, 2)
        XCTAssertGreaterThan(path.reassembler.counters.fragmentsJoined, 0)
    }

    func testDisconnectMidExchangeReturnsCreditsAndFailsTheExchange() {
        var path = LEDataPath()
        _ = path.hostStateChanged(scanning(count: 3))
        _ = path.handle(connected(handle), now: .zero)
        let sent = path.startExchange(ExchangeHarness.request(), on: handle, now: .zero)
        XCTAssertEqual(sent.count, 1)
        XCTAssertEqual(path.flow.availableCredits, 2)
        let actions = path.handle(.disconnectionComplete(.init(connectionHandle: handle, reason: .connectionTimeout)), now: .zero)
        XCTAssertEqual(actions, [.connectionClosed(handle: handle, .disconnected(.connectionTimeout)),
                                 .exchangeFinished(handle: handle, .failure(.gatt(.linkClosed)))])
        XCTAssertEqual(path.flow.availableCredits, 3)
        XCTAssertFalse(path.isOpen(handle))
        XCTAssertNil(path.nextDeadline)
        // Late completions and data for the gone handle change nothing.
        _ = path.handle(.numberOfCompletedPackets([.init(connectionHandle: handle, count: 1)]), now: .zero)
        XCTAssertEqual(path.flow.availableCredits, 3)
        XCTAssertEqual(path.receiveACL(ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: [1, 0, 4, 0, 0x0B]), now: .zero), [])
        XCTAssertEqual(path.counters.aclDropped, 1)
    }

    func testControllerResetTearsDownEveryConnection() {
        var path = LEDataPath()
        _ = path.hostStateChanged(scanning(count: 4))
        for h: UInt16 in [1, 2] {
            _ = path.handle(connected(h), now: .zero)
            _ = path.startExchange(ExchangeHarness.request(), on: h, now: .zero)
        }
        XCTAssertEqual(path.flow.availableCredits, 2)
        let actions = path.hostStateChanged(.recovering(reason: .hardwareError(code: 1), attempt: 1))
        XCTAssertEqual(actions, [
            .connectionClosed(handle: 1, .controllerReset), .exchangeFinished(handle: 1, .failure(.gatt(.linkClosed))),
            .connectionClosed(handle: 2, .controllerReset), .exchangeFinished(handle: 2, .failure(.gatt(.linkClosed))),
        ])
        XCTAssertEqual(path.openHandles, [])
        XCTAssertFalse(path.isReady)
        XCTAssertNil(path.nextDeadline)
        // Nothing can start until the controller is back; then all credits are there.
        XCTAssertEqual(path.startExchange(ExchangeHarness.request(), on: 1, now: .zero),
                       [.exchangeFinished(handle: 1, .failure(.gatt(.linkClosed)))])
        _ = path.hostStateChanged(.initializing)
        _ = path.hostStateChanged(scanning(count: 4))
        XCTAssertEqual(path.flow.availableCredits, 4)
        XCTAssertEqual(path.flow.outstandingTotal, 0)
    }

    func testTimeoutDisconnectsTheLink() {
        var path = LEDataPath(configuration: .init(gatt: .init(bearer: .init(operationTimeout: .seconds(5)))))
        _ = path.hostStateChanged(scanning())
        path.connectionOpened(handle)
        _ = path.startExchange(ExchangeHarness.request(), on: handle, now: .zero)
        XCTAssertEqual(path.nextDeadline, Instant.zero + .seconds(5))
        XCTAssertEqual(path.timerFired(now: Instant.zero + .seconds(1)), [])
        let actions = path.timerFired(now: Instant.zero + .seconds(5))
        XCTAssertEqual(actions, [.exchangeFinished(handle: handle, .failure(.gatt(.timeout))),
                                 .disconnect(handle: handle, reason: .remoteUserTerminated)])
        XCTAssertEqual(path.startExchange(ExchangeHarness.request(), on: handle, now: Instant.zero + .seconds(6)),
                       [.exchangeFinished(handle: handle, .failure(.gatt(.bearerClosed)))])
    }

    /// A peer answering each request just before its timeout would hold the link for
    /// minutes; the exchange deadline ends it.
    func testSlowDripPeerHitsTheExchangeDeadline() {
        var path = LEDataPath(configuration: .init(gatt: .init(bearer: .init(operationTimeout: .seconds(5))), exchangeTimeout: .seconds(10)))
        _ = path.hostStateChanged(scanning(count: 8))
        path.connectionOpened(handle)
        var now = Instant.zero
        var actions = path.startExchange(ExchangeHarness.request(), on: handle, now: now)
        var finished: [LEDataPath.Action] = []
        var start: UInt16 = 1
        for _ in 0 ..< 10 {
            now = now + .milliseconds(4_900)
            actions = path.timerFired(now: now)
            // One more unrelated characteristic, just in time.
            let answer: [UInt8] = start == 1
                ? [0x07, 0x01, 0x00, 0xFF, 0xFF]
                : [0x09, 0x07, UInt8(start & 0xFF), UInt8(start >> 8), 0x02, UInt8((start + 1) & 0xFF), UInt8((start + 1) >> 8), 0x19, 0x2A]
            start += 2
            let frame = L2CAPBasicFrame(connectionHandle: handle, channel: .attribute, payload: answer).bytes
            actions += path.receiveACL(ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: frame[...]), now: now)
            if let deadline = path.nextDeadline, deadline <= now + .milliseconds(4_900) {
                actions += path.timerFired(now: deadline)
            }
            finished += actions.filter { if case .sendACL = $0 { false } else { true } }
            if !finished.isEmpty { break }
        }
        XCTAssertEqual(finished, [.exchangeFinished(handle: handle, .failure(.gatt(.timeout))),
                                  .disconnect(handle: handle, reason: .remoteUserTerminated)])
        XCTAssertEqual(path.client(on: handle)?.bearer.isClosed, true)
        XCTAssertNil(path.nextDeadline)
    }

    func testSignallingAndPairingAreAnsweredOverACL() {
        var path = LEDataPath()
        var peer = Peer()
        _ = path.hostStateChanged(scanning())
        path.connectionOpened(handle)
        let update = L2CAPBasicFrame(connectionHandle: handle, channel: .leSignalling,
                                     payload: [0x12, 0x01, 0x08, 0x00, 24, 0, 40, 0, 0, 0, 0xF4, 0x01]).bytes
        let others = pump(&path, &peer, path.receiveACL(ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: update[...]), now: .zero))
        XCTAssertEqual(others, [.connectionParametersAccepted(handle: handle, .init(intervalMin: 24, intervalMax: 40, peripheralLatency: 0, supervisionTimeout: 500))])
        let pairing = L2CAPBasicFrame(connectionHandle: handle, channel: .securityManager, payload: [0x01, 3, 0, 1, 16, 7, 7]).bytes
        _ = pump(&path, &peer, path.receiveACL(ACLDataHeader.packet(handle: handle, boundary: .firstFlushable, data: pairing[...]), now: .zero))
        XCTAssertEqual(peer.received.map(\.channel), [.leSignalling, .securityManager])
        XCTAssertEqual(peer.received.last?.payload, [0x05, 0x05])
    }

    func testBusyAndUnknownConnections() {
        var path = LEDataPath()
        _ = path.hostStateChanged(scanning())
        XCTAssertEqual(path.startExchange(ExchangeHarness.request(), on: 7, now: .zero), [.exchangeFinished(handle: 7, .failure(.gatt(.linkClosed)))])
        path.connectionOpened(7)
        _ = path.startExchange(ExchangeHarness.request(), on: 7, now: .zero)
        XCTAssertEqual(path.startExchange(ExchangeHarness.request(), on: 7, now: .zero), [.exchangeFinished(handle: 7, .failure(.gatt(.busy)))])
        path.connectionOpened(0x0F00)
        XCTAssertFalse(path.isOpen(0x0F00))
    }

    func testSeededFuzzOfACLIntoTheDataPath() {
        var random = SplitMix64(seed: 77)
        var path = LEDataPath()
        _ = path.hostStateChanged(scanning(count: 4))
        for h: UInt16 in [1, 2] { path.connectionOpened(h) }
        for round in 0 ..< 20_000 {
            if round % 500 == 0 {
                for h: UInt16 in [1, 2] where path.client(on: h)?.isBusy != true {
                    _ = path.startExchange(ExchangeHarness.request(), on: h, now: Instant(nanoseconds: Int64(round)))
                }
            }
            var data = [UInt8]()
            for _ in 0 ..< Int.random(in: 0 ... 30, using: &random) { data.append(UInt8.random(in: 0 ... 255, using: &random)) }
            if data.count >= 4, Bool.random(using: &random) {
                data[0] = UInt8(data.count - 4)
                data[1] = 0
                data[2] = [4, 5, 6][Int.random(in: 0 ..< 3, using: &random)]
                data[3] = 0
            }
            let h = UInt16.random(in: 1 ... 3, using: &random)
            let boundary = ACLPacketBoundary(rawValue: UInt8.random(in: 0 ... 3, using: &random))
            for action in path.receiveACL(ACLDataHeader.packet(handle: h, boundary: boundary, data: data[...]), now: Instant(nanoseconds: Int64(round))) {
                if case .sendACL(let packet) = action {
                    _ = path.handle(.numberOfCompletedPackets([.init(connectionHandle: (try? ACLDataHeader.decode(packet.payload))?.0.connectionHandle ?? 0, count: 1)]), now: .zero)
                }
            }
            XCTAssertLessThanOrEqual(path.reassembler.pendingBytes, 2 * 516)
            XCTAssertEqual(path.flow.availableCredits + path.flow.outstandingTotal, path.flow.totalCredits)
        }
    }
}
