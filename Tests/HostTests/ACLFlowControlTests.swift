import HCI
import SplitMix
import XCTest
@testable import Host

final class ACLFlowControlTests: XCTestCase {
    private func buffer(_ length: Int, _ count: Int) -> ACLBufferInfo {
        ACLBufferInfo(packetLength: length, packetCount: count, isShared: false)
    }

    private func decode(_ packet: HCIPacket) throws -> (ACLDataHeader, [UInt8]) {
        let (header, data) = try ACLDataHeader.decode(packet.payload)
        return (header, Array(data))
    }

    func testFragmentsToThePacketLengthWithBoundaryFlags() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 10))
        flow.open(0x0040)
        let pdu = (0 ..< 60).map { UInt8($0) }
        let sent = try flow.send(pdu, on: 0x0040)
        XCTAssertEqual(sent.count, 3)
        let decoded = try sent.map(decode)
        XCTAssertEqual(decoded.map(\.0.boundary), [.firstNonFlushable, .continuing, .continuing])
        XCTAssertEqual(decoded.map(\.1.count), [27, 27, 6])
        XCTAssertEqual(decoded.flatMap(\.1), pdu)
        XCTAssertTrue(decoded.allSatisfy { $0.0.connectionHandle == 0x0040 })
        XCTAssertEqual(flow.availableCredits, 7)
        XCTAssertEqual(flow.outstanding(on: 0x0040), 3)
    }

    func testCreditsAreTakenBeforeSendingAndReturnedByCompletions() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 2))
        flow.open(1)
        XCTAssertEqual(try flow.send(Array(repeating: 0xAA, count: 27 * 3), on: 1).count, 2)
        XCTAssertEqual(flow.availableCredits, 0)
        XCTAssertEqual(flow.queuedFragments(on: 1), 1)
        // Nothing more goes out without a credit.
        XCTAssertEqual(try flow.send([1, 2, 3], on: 1).count, 0)
        let released = flow.completed([HCICompletedPackets(connectionHandle: 1, count: 1)])
        XCTAssertEqual(released.count, 1)
        XCTAssertEqual(try decode(released[0]).0.boundary, .continuing)
        XCTAssertEqual(flow.completed([HCICompletedPackets(connectionHandle: 1, count: 2)]).count, 1)
        XCTAssertEqual(flow.outstanding(on: 1), 1)
        XCTAssertEqual(flow.completed([HCICompletedPackets(connectionHandle: 1, count: 2)]).count, 0)
        XCTAssertEqual(flow.availableCredits, 2)
        XCTAssertEqual(flow.counters.excessCompletions, 1)
    }

    func testBogusCompletionsNeverInflateCredits() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 3))
        flow.open(1)
        _ = try flow.send([1], on: 1)
        _ = flow.completed([HCICompletedPackets(connectionHandle: 1, count: 500),
                            HCICompletedPackets(connectionHandle: 0x0777, count: 9),
                            HCICompletedPackets(connectionHandle: 1, count: 0xFFFF)])
        XCTAssertEqual(flow.availableCredits, 3)
        XCTAssertEqual(flow.counters.excessCompletions, 499 + 0xFFFF)
        XCTAssertEqual(flow.counters.completionsForUnknownHandles, 9)
        XCTAssertLessThanOrEqual(flow.availableCredits, flow.totalCredits)
    }

    func testDisconnectReturnsOutstandingCreditsAndDropsTheQueue() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 2))
        flow.open(1)
        flow.open(2)
        _ = try flow.send(Array(repeating: 1, count: 27 * 4), on: 1)
        XCTAssertEqual(flow.availableCredits, 0)
        XCTAssertEqual(try flow.send([9, 9], on: 2).count, 0)
        // Link 1 goes away with 2 fragments in the controller and 2 queued: link 2 gets a turn.
        let released = flow.close(1)
        XCTAssertEqual(released.count, 1)
        XCTAssertEqual(try decode(released[0]).0.connectionHandle, 2)
        XCTAssertEqual(flow.counters.fragmentsDroppedOnClose, 2)
        XCTAssertEqual(flow.availableCredits, 1)
        XCTAssertFalse(flow.isOpen(1))
        // Late completions for the closed handle change nothing.
        _ = flow.completed([HCICompletedPackets(connectionHandle: 1, count: 2)])
        XCTAssertEqual(flow.availableCredits, 1)
        XCTAssertThrowsError(try flow.send([1], on: 1)) { XCTAssertEqual($0 as? ACLSendError, .notConnected(1)) }
        XCTAssertEqual(flow.close(2).count, 0)
        XCTAssertEqual(flow.availableCredits, 2)
    }

    func testControllerResetTearsDownEveryConnectionAndRestoresCredits() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 4))
        for handle: UInt16 in [1, 2, 3] {
            flow.open(handle)
            _ = try flow.send(Array(repeating: 0, count: 60), on: handle)
        }
        XCTAssertEqual(flow.availableCredits, 0)
        let torn = flow.reset(buffer: buffer(251, 8))
        XCTAssertEqual(Set(torn), [1, 2, 3])
        XCTAssertEqual(flow.openHandles, [])
        XCTAssertEqual(flow.availableCredits, 8)
        XCTAssertEqual(flow.totalCredits, 8)
        XCTAssertEqual(flow.packetLength, 251)
        // Completions from before the reset are for handles that no longer exist.
        _ = flow.completed([HCICompletedPackets(connectionHandle: 1, count: 3)])
        XCTAssertEqual(flow.availableCredits, 8)
        flow.open(1)
        XCTAssertEqual(try flow.send(Array(repeating: 0, count: 60), on: 1).count, 1)
    }

    func testConnectionsTakeTurns() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 1))
        flow.open(1)
        flow.open(2)
        _ = try flow.send(Array(repeating: 1, count: 27 * 3), on: 1)
        _ = try flow.send(Array(repeating: 2, count: 27 * 3), on: 2)
        var order = [UInt16]()
        for _ in 0 ..< 5 {
            let sent = flow.completed([HCICompletedPackets(connectionHandle: order.last ?? 1, count: 1)])
            order.append(contentsOf: try sent.map { try decode($0).0.connectionHandle })
        }
        XCTAssertEqual(order, [2, 1, 2, 1, 2])
    }

    func testQueueIsBounded() throws {
        var flow = ACLFlowControl(buffer: buffer(27, 1), maxQueuedFragments: 4)
        flow.open(1)
        _ = try flow.send(Array(repeating: 0, count: 27), on: 1)
        _ = try flow.send(Array(repeating: 0, count: 27 * 4), on: 1)
        XCTAssertThrowsError(try flow.send([0], on: 1)) { XCTAssertEqual($0 as? ACLSendError, .queueFull(1)) }
        XCTAssertEqual(flow.queuedFragments(on: 1), 4)
        XCTAssertEqual(flow.counters.queueOverflows, 1)
    }

    func testZeroBufferInfoIsClampedToTheMinimums() throws {
        var flow = ACLFlowControl(buffer: buffer(0, 0))
        flow.open(1)
        XCTAssertEqual(flow.packetLength, 27)
        XCTAssertEqual(flow.totalCredits, 1)
        XCTAssertEqual(try flow.send([1, 2], on: 1).count, 1)
    }

    /// Random sends, completions, disconnects and resets: the books always balance.
    func testRandomisedCreditAccountingInvariants() throws {
        var random = SplitMix64(seed: 0xAC1)
        var flow = ACLFlowControl(buffer: buffer(27, 5), maxQueuedFragments: 16)
        for _ in 0 ..< 5_000 {
            let handle = UInt16.random(in: 1 ... 4, using: &random)
            switch Int.random(in: 0 ..< 10, using: &random) {
            case 0: flow.open(handle)
            case 1: _ = flow.close(handle)
            case 2 where Int.random(in: 0 ..< 20, using: &random) == 0: flow.reset(buffer: buffer(27, 5))
            case 3, 4, 5: _ = try? flow.send(Array(repeating: 0, count: Int.random(in: 1 ... 100, using: &random)), on: handle)
            default:
                _ = flow.completed([HCICompletedPackets(connectionHandle: handle, count: UInt16.random(in: 0 ... 3, using: &random))])
            }
            XCTAssertEqual(flow.availableCredits + flow.outstandingTotal, flow.totalCredits)
            XCTAssertGreaterThanOrEqual(flow.availableCredits, 0)
        }
    }
}
