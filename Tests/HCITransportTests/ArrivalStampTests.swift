#if canImport(Glibc)
import Glibc
#endif
import HCI
@testable import HCITransport
import XCTest

/// Reports count from when they arrived, not from the read that let them gather
/// (docs/presence.md, "The signal"): the user channel's kernel stamps, kept per read by
/// `ArrivalMarks` and offered with each packet.
final class ArrivalStampTests: XCTestCase {
    func testMarksFollowBytesSoASkippedByteCannotShiftTheStamps() {
        var marks = ArrivalMarks()
        XCTAssertNil(marks.frontStamp)
        marks.read(byteCount: 10, stampMicroseconds: 100)
        marks.read(byteCount: 4, stampMicroseconds: 0)  // not stamped
        marks.read(byteCount: 6, stampMicroseconds: 300)
        XCTAssertEqual(marks.frontStamp, 100)
        marks.consume(3)  // skipped bytes: the packet at the front still came with read 1
        XCTAssertEqual(marks.frontStamp, 100)
        marks.consume(7)
        XCTAssertNil(marks.frontStamp, "read 2 had no stamp")
        marks.consume(4)
        XCTAssertEqual(marks.frontStamp, 300)
        marks.consume(6)
        XCTAssertNil(marks.frontStamp)
        marks.read(byteCount: 5, stampMicroseconds: 400)
        XCTAssertEqual(marks.frontStamp, 400)
        marks.reset()
        XCTAssertNil(marks.frontStamp)
    }

    /// An unfinished packet keeps its stamp however many reads follow it (the marks
    /// before it are dropped, not the ones it needs).
    func testAnUnfinishedPacketKeepsItsStampWhileMarksAreCompacted() {
        var marks = ArrivalMarks()
        marks.read(byteCount: 2, stampMicroseconds: 7)
        for index in 0 ..< 500 {
            marks.consume(index == 0 ? 1 : 2)
            marks.read(byteCount: 2, stampMicroseconds: Int64(8 + index))
            XCTAssertEqual(marks.frontStamp, Int64(7 + index), "after \(index) reads")
        }
    }

    /// Two reports that arrive 60 ms apart and are read together are offered with ages
    /// that differ by those 60 ms, the older first; the same packets on a stream have no
    /// age (they count as read).
    func testAPacketSocketOffersEachPacketWithTheAgeOfItsKernelStamp() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends), 0)
        defer { close(ends[1]) }
        XCTAssertTrue(DescriptorStream.stampArrivals(ends[0]))
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        let stream = DescriptorStream(kind: .packetSocket)
        stream.attach(ends[0])
        defer { stream.close() }

        try writeAll(ends[1], Packets.advertisingReport(address: 1, rssi: -50).h4Bytes)
        usleep(60_000)  // the gap between two arrivals, which the stamps must show
        try writeAll(ends[1], Packets.advertisingReport(address: 2, rssi: -50).h4Bytes)
        try writeAll(ends[1], Packets.resetComplete.h4Bytes)

        var ages: [Duration] = []
        let received = try stream.receive { _, payload in
            guard payload.first == 0x3E else { return false }
            ages.append(stream.offeredPacketAge)
            return true
        }
        XCTAssertEqual(received.taken, 2)
        XCTAssertEqual(received.rest.map(\.payload), [Packets.resetComplete.payload])
        XCTAssertEqual(ages.count, 2)
        XCTAssertGreaterThanOrEqual(ages[0] - ages[1], .milliseconds(59), "\(ages)")
        XCTAssertLessThan(ages[0] - ages[1], DescriptorStream.longestBelievedAge, "\(ages)")
        XCTAssertGreaterThanOrEqual(ages[1], .zero)
        XCTAssertEqual(stream.offeredPacketAge, .zero, "outside an offer")
    }

    func testAStreamOffersPacketsWithoutAge() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        defer { close(ends[1]) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        let stream = DescriptorStream(kind: .socket)
        stream.attach(ends[0])
        defer { stream.close() }
        try writeAll(ends[1], Packets.advertisingReport(address: 1, rssi: -50).h4Bytes)
        usleep(20_000)
        try writeAll(ends[1], Packets.advertisingReport(address: 2, rssi: -50).h4Bytes)
        var ages: [Duration] = []
        let received = try stream.receive { _, _ in
            ages.append(stream.offeredPacketAge)
            return true
        }
        XCTAssertEqual(received.taken, 2)
        XCTAssertEqual(ages, [.zero, .zero])
    }
}
