import HCI
import SplitMix
import XCTest
@testable import Host

final class ACLReassemblerTests: XCTestCase {
    private func fragment(_ boundary: ACLPacketBoundary, _ data: [UInt8]) -> (ACLDataHeader, ArraySlice<UInt8>) {
        fragment(0x40, boundary, data)
    }

    private func fragment(_ handle: UInt16, _ boundary: ACLPacketBoundary, _ data: [UInt8]) -> (ACLDataHeader, ArraySlice<UInt8>) {
        (ACLDataHeader(connectionHandle: handle, boundary: boundary, dataLength: UInt16(data.count)), data[...])
    }

    private func frameBytes(cid: UInt16, _ payload: [UInt8]) -> [UInt8] {
        L2CAPBasicFrame(connectionHandle: 0, channel: L2CAPChannelID(rawValue: cid), payload: payload).bytes
    }

    func testHeaderDecodingChecksLengths() throws {
        let packet = ACLDataHeader.packet(handle: 0x0ABC, boundary: .firstFlushable, data: [1, 2, 3])
        let (header, data) = try ACLDataHeader.decode(packet.payload)
        XCTAssertEqual(header.connectionHandle, 0x0ABC)
        XCTAssertEqual(header.boundary, .firstFlushable)
        XCTAssertEqual(Array(data), [1, 2, 3])
        XCTAssertThrowsError(try ACLDataHeader.decode([0x40, 0x20, 0x05])) { XCTAssertEqual($0 as? ACLDataError, .truncatedHeader(3)) }
        XCTAssertThrowsError(try ACLDataHeader.decode([0x40, 0x20, 0x05, 0x00, 1])) {
            XCTAssertEqual($0 as? ACLDataError, .lengthMismatch(declared: 5, actual: 1))
        }
    }

    func testWholeAndFragmentedFrames() throws {
        var reassembler = ACLReassembler()
        let bytes = frameBytes(cid: 4, [0x0B, 1, 2, 3])
        let (h, d) = fragment(.firstFlushable, bytes)
        XCTAssertEqual(try reassembler.receive(h, data: d), L2CAPBasicFrame(connectionHandle: 0x40, channel: .attribute, payload: [0x0B, 1, 2, 3]))
        // Split inside the basic header, then across the payload.
        let long = frameBytes(cid: 5, Array(0 ..< 40))
        let pieces = [Array(long[0 ..< 3]), Array(long[3 ..< 20]), Array(long[20...])]
        var frame: L2CAPBasicFrame?
        for (index, piece) in pieces.enumerated() {
            let (header, data) = fragment(index == 0 ? .firstFlushable : .continuing, piece)
            frame = try reassembler.receive(header, data: data)
            if index < 2 { XCTAssertNil(frame) }
        }
        XCTAssertEqual(frame?.channel, .leSignalling)
        XCTAssertEqual(frame?.payload, Array(0 ..< 40))
        XCTAssertEqual(reassembler.pendingBytes, 0)
    }

    func testContinuationWithoutStartIsDropped() {
        var reassembler = ACLReassembler()
        let (h, d) = fragment(.continuing, [1, 2, 3])
        XCTAssertThrowsError(try reassembler.receive(h, data: d)) { XCTAssertEqual($0 as? ACLDataError, .continuationWithoutStart(0x40)) }
        XCTAssertEqual(reassembler.counters.continuationsWithoutStart, 1)
    }

    func testOversizedAnnouncedLengthIsRefusedBeforeBuffering() {
        var reassembler = ACLReassembler(maxPDULength: 64)
        let (h, d) = fragment(.firstFlushable, [0xFF, 0xFF, 0x04, 0x00, 1, 2])
        XCTAssertThrowsError(try reassembler.receive(h, data: d)) {
            XCTAssertEqual($0 as? ACLDataError, .oversizedPDU(handle: 0x40, length: 0xFFFF))
        }
        XCTAssertEqual(reassembler.pendingBytes, 0)
        // The continuations of the refused PDU find nothing started.
        let (c, cd) = fragment(.continuing, Array(repeating: 0, count: 27))
        XCTAssertThrowsError(try reassembler.receive(c, data: cd))
    }

    func testEndlessContinuationsNeverGrowPastTheBound() {
        var reassembler = ACLReassembler(maxPDULength: 64)
        // Announces 64, then keeps sending: the PDU completes at 68 bytes and then overflows.
        let (h, d) = fragment(.firstFlushable, [64, 0, 4, 0] + Array(repeating: 0, count: 23))
        XCTAssertNil(try reassembler.receive(h, data: d))
        var errors = 0
        for _ in 0 ..< 1000 {
            let (c, cd) = fragment(.continuing, Array(repeating: 0, count: 27))
            do { _ = try reassembler.receive(c, data: cd) } catch { errors += 1 }
            XCTAssertLessThanOrEqual(reassembler.pendingBytes, 68)
        }
        // The first continuation still fits (54 of 68 bytes); every later one is refused.
        XCTAssertEqual(errors, 999)
    }

    func testMoreBytesThanAnnouncedDropsThePDU() {
        var reassembler = ACLReassembler()
        let (h, d) = fragment(.firstFlushable, [2, 0, 4, 0, 1, 2, 3])
        XCTAssertThrowsError(try reassembler.receive(h, data: d)) { XCTAssertEqual($0 as? ACLDataError, .overlongPDU(0x40)) }
        XCTAssertEqual(reassembler.pendingBytes, 0)
    }

    func testNewStartInterruptsAPartialPDUAndHandlesAreIndependent() throws {
        var reassembler = ACLReassembler()
        let (a, ad) = fragment(0x40, .firstFlushable, [10, 0, 4, 0, 1])
        XCTAssertNil(try reassembler.receive(a, data: ad))
        let (b, bd) = fragment(0x41, .firstFlushable, [10, 0, 4, 0, 1])
        XCTAssertNil(try reassembler.receive(b, data: bd))
        let (a2, a2d) = fragment(0x40, .firstFlushable, [1, 0, 4, 0, 7])
        XCTAssertEqual(try reassembler.receive(a2, data: a2d)?.payload, [7])
        XCTAssertEqual(reassembler.counters.interruptedPDUs, 1)
        let (b2, b2d) = fragment(0x41, .continuing, Array(repeating: 2, count: 9))
        XCTAssertEqual(try reassembler.receive(b2, data: b2d)?.payload, [1] + Array(repeating: 2, count: 9))
        reassembler.drop(handle: 0x41)
        XCTAssertEqual(reassembler.pendingBytes, 0)
    }

    func testSeededFuzzNeverTrapsAndStaysBounded() {
        var random = SplitMix64(seed: 99)
        var reassembler = ACLReassembler(maxPDULength: 128)
        for _ in 0 ..< 20_000 {
            var payload = [UInt8]()
            for _ in 0 ..< Int.random(in: 0 ... 40, using: &random) { payload.append(UInt8.random(in: 0 ... 255, using: &random)) }
            if let raw = UInt16?(UInt16.random(in: 0 ... 0xFFFF, using: &random)) {
                let packet = [UInt8(truncatingIfNeeded: raw & 0x3003), UInt8(truncatingIfNeeded: (raw & 0x3003) >> 8),
                              UInt8(truncatingIfNeeded: payload.count), 0] + payload
                if let (header, data) = try? ACLDataHeader.decode(packet) { _ = try? reassembler.receive(header, data: data) }
            }
            XCTAssertLessThanOrEqual(reassembler.pendingBytes, 4 * (128 + 4))
        }
    }
}
