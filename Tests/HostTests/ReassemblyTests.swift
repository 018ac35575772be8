import HCI
import XCTest
@testable import Host

private extension ExtendedReportReassembler {
    /// What is delivered for `report` (read as the view the host hands in), as a value.
    mutating func accept(_ report: LEAdvertisingReport) -> LEAdvertisingReport? {
        switch LEAdvertisingReportView.withView(of: report, { accept($0) }) {
        case .asItCame: report
        case .instead(let delivered): delivered
        case .nothing: nil
        }
    }
}

final class ReassemblyTests: XCTestCase {
    private func report(_ address: UInt64, sid: UInt8? = 1, _ data: [UInt8], _ status: LEAdvertisingReport.DataStatus,
                        rssi: Int8 = -60, scanResponse: Bool = false) -> LEAdvertisingReport {
        LEAdvertisingReport(properties: scanResponse ? [.scannable, .scanResponse] : [.connectable], dataStatus: status,
                            addressType: .randomDevice, address: BluetoothAddress(rawValue: address),
                            secondaryPHY: .le1M, sid: sid, rssi: rssi, data: data[...])
    }

    func testCompleteAndLegacyReportsPassThrough() {
        var reassembler = ExtendedReportReassembler()
        let whole = report(1, [1, 2, 3], .complete)
        XCTAssertEqual(reassembler.accept(whole), whole)
        let legacy = LEAdvertisingReport(properties: [.legacy], addressType: .publicDevice, address: BluetoothAddress(rawValue: 2), rssi: -1, data: [9])
        XCTAssertEqual(reassembler.accept(legacy), legacy)
        XCTAssertEqual(reassembler.pendingAdvertisers, 0)
    }

    func testFragmentsAreJoinedPerAdvertiserAndSID() throws {
        var reassembler = ExtendedReportReassembler()
        XCTAssertNil(reassembler.accept(report(1, sid: 1, [1, 2], .incompleteMoreToCome)))
        XCTAssertNil(reassembler.accept(report(1, sid: 2, [7], .incompleteMoreToCome)))
        XCTAssertNil(reassembler.accept(report(3, sid: 1, [8], .incompleteMoreToCome)))
        XCTAssertNil(reassembler.accept(report(1, sid: 1, [3, 4], .incompleteMoreToCome)))
        let joined = try XCTUnwrap(reassembler.accept(report(1, sid: 1, [5], .complete, rssi: -40)))
        XCTAssertEqual(Array(joined.data), [1, 2, 3, 4, 5])
        XCTAssertEqual(joined.dataStatus, .complete)
        XCTAssertEqual(joined.rssi, -40, "RSSI of the latest fragment")
        XCTAssertEqual(joined.sid, 1)
        let other = try XCTUnwrap(reassembler.accept(report(1, sid: 2, [6], .complete)))
        XCTAssertEqual(Array(other.data), [7, 6])
        XCTAssertEqual(reassembler.pendingAdvertisers, 1)
        XCTAssertEqual(reassembler.counters.reassembled, 2)
        XCTAssertEqual(reassembler.counters.fragmentsBuffered, 4)
        // Scan responses are kept apart from the advertisement they answer.
        XCTAssertNil(reassembler.accept(report(9, [1], .incompleteMoreToCome)))
        let response = try XCTUnwrap(reassembler.accept(report(9, [2], .complete, scanResponse: true)))
        XCTAssertEqual(Array(response.data), [2])
    }

    func testTruncatedIsDeliveredMarkedOrDropped() throws {
        var reassembler = ExtendedReportReassembler()
        XCTAssertNil(reassembler.accept(report(1, [1, 2], .incompleteMoreToCome)))
        let truncated = try XCTUnwrap(reassembler.accept(report(1, [3], .incompleteTruncated)))
        XCTAssertEqual(Array(truncated.data), [1, 2, 3])
        XCTAssertEqual(truncated.dataStatus, .incompleteTruncated)
        XCTAssertEqual(reassembler.counters.truncated, 1)
        XCTAssertEqual(reassembler.pendingAdvertisers, 0)

        var dropping = ExtendedReportReassembler(limits: .init(deliverTruncated: false))
        XCTAssertNil(dropping.accept(report(1, [1], .incompleteMoreToCome)))
        XCTAssertNil(dropping.accept(report(1, [2], .incompleteTruncated)))
        XCTAssertEqual(dropping.counters.truncated, 1)
        XCTAssertEqual(dropping.pendingAdvertisers, 0)
    }

    func testBytesPerAdvertiserAreBounded() {
        var reassembler = ExtendedReportReassembler(limits: .init(maxBytesPerAdvertiser: 400, maxPendingAdvertisers: 4))
        XCTAssertNil(reassembler.accept(report(1, Array(repeating: 1, count: 229), .incompleteMoreToCome)))
        XCTAssertNil(reassembler.accept(report(1, Array(repeating: 2, count: 229), .incompleteMoreToCome)))
        XCTAssertEqual(reassembler.counters.oversizedDropped, 1)
        XCTAssertEqual(reassembler.pendingAdvertisers, 0, "the oversized advertisement is forgotten")
        // Its tail, arriving complete, is delivered alone (the head was dropped).
        XCTAssertEqual(reassembler.accept(report(1, [3], .complete)).map { Array($0.data) }, [3])
        // A controller streaming "more to come" forever stays within bounds.
        for _ in 0 ..< 1000 { _ = reassembler.accept(report(2, Array(repeating: 0, count: 200), .incompleteMoreToCome)) }
        XCTAssertLessThanOrEqual(reassembler.pendingBytes, 400)
    }

    func testPendingAdvertisersAreBoundedOldestEvicted() throws {
        var reassembler = ExtendedReportReassembler(limits: .init(maxPendingAdvertisers: 64))
        for address in 0 ..< 100 { XCTAssertNil(reassembler.accept(report(UInt64(address), [UInt8(address)], .incompleteMoreToCome))) }
        XCTAssertEqual(reassembler.pendingAdvertisers, 64)
        XCTAssertEqual(reassembler.counters.evicted, 36)
        // The oldest were evicted: advertiser 0 starts over, advertiser 99 is joined.
        XCTAssertEqual(reassembler.accept(report(0, [200], .complete)).map { Array($0.data) }, [200])
        XCTAssertEqual(reassembler.accept(report(99, [200], .complete)).map { Array($0.data) }, [99, 200])
        reassembler.reset()
        XCTAssertEqual(reassembler.pendingAdvertisers, 0)
    }
}
