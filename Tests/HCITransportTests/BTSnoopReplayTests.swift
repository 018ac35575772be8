import Glibc
import HCI
import XCTest
@testable import HCITransport

final class BTSnoopReplayTests: XCTestCase {
    /// A bring-up and a few seconds of scanning as a real host and controller recorded them.
    private let recording: [(BTSnoop.Direction, HCIPacket)] = [
        (.hostToController, Packets.reset),
        (.controllerToHost, Packets.resetComplete),
        (.controllerToHost, Packets.advertisingReport(address: 1, rssi: -60)),
        (.hostToController, Packets.setScanEnable(true)),
        (.controllerToHost, Packets.commandStatus),
        (.controllerToHost, Packets.advertisingReport(address: 2, rssi: -61)),
        (.controllerToHost, Packets.disconnectionComplete),
        (.controllerToHost, Packets.acl),
        (.hostToController, Packets.acl),
        (.controllerToHost, Packets.advertisingReport(address: 3, rssi: -62)),
    ]

    /// What the host must see after enabling scanning: the controller's packets in order,
    /// without the recorded command answers.
    private var expectedReplay: [HCIPacket] {
        recording.filter { direction, packet in
            direction == .controllerToHost && !(packet.type == .event && [0x0E, 0x0F].contains(packet.payload.first))
        }.map(\.1)
    }

    private func openReplay(_ bytes: [UInt8]) throws -> BTSnoopReplayTransport {
        let path = temporaryPath(self, "replay.btsnoop")
        try writeFile(path, bytes)
        let transport = BTSnoopReplayTransport(path: path)
        try transport.open()
        addTeardownBlock { transport.close() }
        return transport
    }

    func testBringUpGetsSyntheticAnswersAndNothingRecorded() throws {
        let transport = try openReplay(capture(recording))
        XCTAssertNil(transport.fileDescriptor)
        XCTAssertFalse(transport.hasPendingInput)
        XCTAssertEqual(try transport.receive(), [])

        try transport.send(Packets.reset)
        XCTAssertTrue(transport.hasPendingInput)
        XCTAssertEqual(try transport.receive(), [Packets.resetComplete])

        try transport.send(Packets.readBDAddr)
        try transport.send(Packets.setScanEnable(false))
        XCTAssertEqual(try transport.receive(), [
            HCIPacket(type: .event, payload: [0x0E, 10, 0x01, 0x09, 0x10, 0x00] + [UInt8](repeating: 0, count: 6)),
            Packets.setScanEnableComplete,
        ])
        // Still nothing from the file: scanning was not enabled.
        XCTAssertFalse(transport.hasPendingInput)
        XCTAssertEqual(try transport.receive(), [])
        XCTAssertEqual(transport.replayedPacketCount, 0)
        XCTAssertFalse(transport.isExhausted)
    }

    func testReturnParameterLengthsOfBringUpCommands() throws {
        let transport = try openReplay(capture(recording))
        // Opcode → length of the return parameters including status (Core spec Vol 4 Part E §7).
        let lengths: [(UInt16, Int)] = [
            (0x0C03, 1), (0x1001, 9), (0x1002, 65), (0x1003, 9), (0x1009, 7), (0x1005, 8),
            (0x2002, 4), (0x2003, 9), (0x201C, 9), (0x200F, 2), (0x2060, 7), (0x0C01, 1), (0x2006, 1),
        ]
        for (opcode, length) in lengths {
            try transport.send(HCIPacket(type: .command, payload: [UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0]))
            let answer = try XCTUnwrap(try transport.receive().first)
            XCTAssertEqual(answer.type, .event)
            XCTAssertEqual(Array(answer.payload.prefix(6)),
                           [0x0E, UInt8(3 + length), 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0x00])
            XCTAssertEqual(answer.payload.count, 5 + length, String(opcode, radix: 16))
            XCTAssertTrue(answer.payload.dropFirst(6).allSatisfy { $0 == 0 })
        }
        // Host data and malformed commands get no answer and do not start the replay.
        try transport.send(Packets.acl)
        try transport.send(HCIPacket(type: .command, payload: [0x0C]))
        try transport.send(HCIPacket(type: .command, payload: [0x0C, 0x20, 0x00]))
        XCTAssertEqual(try transport.receive().count, 1)
        XCTAssertFalse(transport.isReplaying)
    }

    func testScanEnableStartsTheReplayInOrderThenItEnds() throws {
        let transport = try openReplay(capture(recording))
        try transport.send(Packets.reset)
        _ = try transport.receive()
        try transport.send(Packets.setScanEnable(true))
        XCTAssertTrue(transport.hasPendingInput)
        var received: [HCIPacket] = []
        while transport.hasPendingInput { received += try transport.receive() }
        XCTAssertEqual(received.first, Packets.setScanEnableComplete)
        XCTAssertEqual(Array(received.dropFirst()), expectedReplay)
        XCTAssertEqual(transport.replayedPacketCount, expectedReplay.count)
        XCTAssertEqual(transport.skippedRecordCount, recording.count - expectedReplay.count)
        XCTAssertTrue(transport.isExhausted)
        XCTAssertEqual(try transport.receive(), [])

        // Commands after the end are still answered.
        try transport.send(Packets.setScanEnable(false))
        XCTAssertFalse(transport.isExhausted)
        XCTAssertEqual(try transport.receive().count, 1)
        XCTAssertTrue(transport.isExhausted)
    }

    func testExtendedScanEnableStartsItTooAndBatchesAreBounded() throws {
        let transport = try openReplay(capture(recording))
        transport.batchSize = 2
        try transport.send(Packets.setExtendedScanEnable(true))
        var batches: [[HCIPacket]] = []
        while transport.hasPendingInput { batches.append(try transport.receive()) }
        XCTAssertEqual(batches.flatMap { $0 }.dropFirst().map { $0 }, expectedReplay)
        XCTAssertTrue(batches.allSatisfy { $0.count <= 3 }, "\(batches.map(\.count))")
    }

    /// The packets of one `receive()` share one time (the consumer stamps them with it),
    /// so a batch never spans more than `batchTimeSpanMicroseconds` of recorded time.
    func testBatchesSpanLittleRecordedTimeAndCarryIt() throws {
        let start: Int64 = 1_700_000_000_000_000
        let offsets: [Int64] = [0, 5_000, 20_000, 21_000, 1_000_000, 999_000]
        var bytes = BTSnoop.fileHeader(datalink: .h4)
        for (index, offset) in offsets.enumerated() {
            bytes += BTSnoop.encodeRecord(BTSnoop.Record(
                direction: .controllerToHost, packet: Packets.advertisingReport(address: UInt8(index + 1), rssi: -60),
                timestampMicroseconds: start + offset))
        }
        let transport = try openReplay(bytes)
        XCTAssertNil(transport.recordedTimeMicroseconds, "nothing replayed yet")
        try transport.send(Packets.setScanEnable(true))
        var batches: [(count: Int, time: Int64?)] = []
        while transport.hasPendingInput {
            let packets = try transport.receive()
            batches.append((packets.count, transport.recordedTimeMicroseconds.map { $0 - start }))
        }
        // The enable's answer rides with the first two; a step back within the span stays.
        XCTAssertEqual(batches.map(\.count), [3, 2, 2])
        XCTAssertEqual(batches.map(\.time), [5_000, 21_000, 999_000])
    }

    func testCorruptRecordIsAnErrorAfterTheGoodOnes() throws {
        var bytes = capture([(.controllerToHost, Packets.advertisingReport(address: 1, rssi: -50))])
        // A record header whose included length is zero: impossible.
        bytes += [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + [4, 0x0E]
        let transport = try openReplay(bytes)
        try transport.send(Packets.setScanEnable(true))
        let first = try transport.receive()
        XCTAssertEqual(first.count, 2) // the answer and the good report
        XCTAssertThrowsError(try transport.receive()) { error in
            guard case .corruptReplayFile(_, .corruptRecord)? = error as? TransportError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try transport.receive())
    }

    func testGiantRecordLengthIsAnErrorNotAnAllocation() throws {
        var bytes = capture([(.controllerToHost, Packets.acl)])
        bytes += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 1, count: 16)
        let transport = try openReplay(bytes)
        try transport.send(Packets.setScanEnable(true))
        XCTAssertEqual(try transport.receive(), [Packets.setScanEnableComplete, Packets.acl])
        XCTAssertThrowsError(try transport.receive())

        // As the very first record it is found at open already.
        var first = BTSnoop.fileHeader(datalink: .h4)
        first += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 1, count: 16)
        XCTAssertThrowsError(try openReplay(first))
    }

    func testTruncatedLastRecordJustEnds() throws {
        let whole = capture(recording)
        let transport = try openReplay(Array(whole.dropLast(3)))
        try transport.send(Packets.setScanEnable(true))
        var received: [HCIPacket] = []
        while transport.hasPendingInput { received += try transport.receive() }
        XCTAssertEqual(Array(received.dropFirst()), Array(expectedReplay.dropLast()))
        XCTAssertTrue(transport.isExhausted)
    }

    func testNotACaptureFailsAtOpen() throws {
        for bytes in [[], Array("hello, this is not a capture".utf8), BTSnoop.fileHeader(datalink: .init(rawValue: 1003))] {
            let path = temporaryPath(self, "bad")
            try writeFile(path, bytes)
            let transport = BTSnoopReplayTransport(path: path)
            XCTAssertThrowsError(try transport.open()) { error in
                guard case .corruptReplayFile? = error as? TransportError else { return XCTFail("\(error)") }
            }
            XCTAssertFalse(transport.isOpen)
        }
        let missing = BTSnoopReplayTransport(path: "/nonexistent/capture.log")
        XCTAssertThrowsError(try missing.open()) { error in
            XCTAssertEqual(error as? TransportError, .replayFile(path: "/nonexistent/capture.log", errno: ENOENT))
        }
    }

    /// Streams the file: replaying a capture far larger than a chunk leaves the peak memory
    /// of the process well below the file's size.
    func testLargeCaptureIsStreamed() throws {
        let path = temporaryPath(self, "large.btsnoop")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let packet = HCIPacket(type: .acl, payload: [0x40, 0x20, 0xF8, 0x03] + [UInt8](repeating: 0xA5, count: 1016))
        var block = BTSnoop.fileHeader(datalink: .h4)
        let recordsPerBlock = 1000
        for _ in 0 ..< recordsPerBlock {
            block += BTSnoop.encodeRecord(BTSnoop.Record(direction: .controllerToHost, packet: packet, timestampMicroseconds: 0))
        }
        let header = BTSnoop.headerLength
        let blocks = 48 // ~50 MB
        for index in 0 ..< blocks {
            let bytes = index == 0 ? block : Array(block.dropFirst(header))
            try writeAll(fd, bytes)
        }
        close(fd)

        let before = peakResidentKilobytes()
        let transport = BTSnoopReplayTransport(path: path)
        try transport.open()
        defer { transport.close() }
        transport.batchSize = 4096
        try transport.send(Packets.setScanEnable(true))
        var count = 0
        while transport.hasPendingInput { count += try transport.receive().count }
        XCTAssertEqual(count, 1 + blocks * recordsPerBlock)
        XCTAssertTrue(transport.isExhausted)
        let growth = peakResidentKilobytes() - before
        XCTAssertLessThan(growth, 24 * 1024, "peak memory grew by \(growth) KiB for a ~50 MB capture")
    }

    private func peakResidentKilobytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }
}

final class BTSnoopHostileTimestampTests: XCTestCase {
    /// Timestamps with the top bit set must not trap the parser's conversion (it wraps).
    func testHostileTimestampsAreReplayedNotFatal() throws {
        var bytes = BTSnoop.fileHeader(datalink: .h4)
        let packets = [Packets.acl, Packets.disconnectionComplete, Packets.advertisingReport(address: 7, rssi: -1)]
        for (index, packet) in packets.enumerated() {
            var record = BTSnoop.encodeRecord(BTSnoop.Record(direction: .controllerToHost, packet: packet, timestampMicroseconds: 0))
            record.replaceSubrange(16 ..< 24, with: index == 0 ? [0x80, 0, 0, 0, 0, 0, 0, 0] : [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
            bytes += record
        }
        let path = temporaryPath(self, "hostile.btsnoop")
        try writeFile(path, bytes)
        let transport = BTSnoopReplayTransport(path: path)
        try transport.open()
        defer { transport.close() }
        try transport.send(Packets.setScanEnable(true))
        var received: [HCIPacket] = []
        while transport.hasPendingInput { received += try transport.receive() }
        XCTAssertEqual(received, [Packets.setScanEnableComplete] + packets)
    }
}
