import EventLoop
import Glibc
import HCI
import XCTest
@testable import HCITransport

final class TransportDriverTests: XCTestCase {
    /// A host that brings a replayed controller up and scans, entirely on the loop: the replay
    /// is a pending source, so the loop never blocks while it has packets, and stops at its end.
    func testReplayRunsOnTheLoopToItsEnd() throws {
        let reports = (1 ... 200).map { Packets.advertisingReport(address: UInt8($0), rssi: -50) }
        let path = temporaryPath(self, "driver.btsnoop")
        try writeFile(path, capture(reports.map { (.controllerToHost, $0) }))
        let transport = BTSnoopReplayTransport(path: path)
        transport.batchSize = 16
        try transport.open()
        let loop = VirtualEventLoop().loop
        var received: [HCIPacket] = []
        var ended = false
        var failure: TransportError?
        let driver = TransportDriver(
            transport: transport, loop: loop,
            onPackets: { received += $0 },
            onFailure: { failure = $0; loop.stop() },
            onExhausted: { ended = true; loop.stop() })
        driver.start()
        loop.schedule(after: .milliseconds(1)) {
            try? driver.send(Packets.reset)
            try? driver.send(Packets.setScanEnable(true))
        }
        try loop.run()
        XCTAssertNil(failure)
        XCTAssertTrue(ended)
        XCTAssertFalse(driver.isStarted)
        XCTAssertEqual(received, [Packets.resetComplete, Packets.setScanEnableComplete] + reports)
    }

    /// Reports may wait for the next read; a command's completion (a conversation under
    /// way) leaves the descriptor polled.
    func testOnlyAdvertisingReportsPauseReading() throws {
        let paused = try pausedAfterTwoReads(first: Packets.resetComplete) { _ in }
        XCTAssertEqual(paused, [false, true])
    }

    /// Once something was sent its answer is awaited: a pause under way ends at the send,
    /// and a report read meanwhile does not pause reading.
    func testASendKeepsReadingForTheAnswer() throws {
        var pausedAtSend: Bool?
        let paused = try pausedAfterTwoReads(first: Packets.advertisingReport(address: 1, rssi: -50)) { driver in
            try? driver.send(Packets.reset)
            pausedAtSend = driver.isReadingPaused
        }
        XCTAssertEqual(paused, [true, false])
        XCTAssertEqual(pausedAtSend, false)
    }

    /// Whether reading is paused after `first` is read and after a report that follows it
    /// (`between` runs in between), with a pause and an answer wait far longer than the test.
    private func pausedAfterTwoReads(first: HCIPacket, between: @escaping (TransportDriver) -> Void) throws -> [Bool] {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0])
        let peer = ends[1]
        defer { close(peer) }
        let loop = EventLoop()
        var paused: [Bool] = []
        var driver: TransportDriver?
        driver = TransportDriver(
            transport: transport, loop: loop,
            onPackets: { _ in
                // Looked at on the next turn: the driver decides after handing the packets out.
                loop.schedule(after: .zero) {
                    guard let driver else { return }
                    paused.append(driver.isReadingPaused)
                    if paused.count == 1 {
                        between(driver)
                        _ = try? writeAll(peer, Packets.advertisingReport(address: 2, rssi: -50).h4Bytes)
                    } else {
                        loop.stop()
                    }
                }
            },
            onFailure: { _ in loop.stop() })
        driver?.readCoalescing = .seconds(60)
        driver?.answerWait = .seconds(60)
        driver?.start()
        try writeAll(peer, first.h4Bytes)
        try loop.run()
        driver?.stop()
        return paused
    }

    /// A descriptor transport: packets arrive through readability, and a closed peer is a
    /// failure callback. On virtual time: the peer's writes come from timers, nothing waits.
    func testDescriptorTransportDeliversAndReportsClose() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0])
        let peer = ends[1]
        let loop = VirtualEventLoop().loop
        var received: [HCIPacket] = []
        var failure: TransportError?
        let driver = TransportDriver(
            transport: transport, loop: loop,
            onPackets: { packets in
                received += packets
                if received.count == 2 { close(peer) }
            },
            onFailure: { failure = $0; loop.stop() })
        driver.start()
        loop.schedule(after: .milliseconds(1)) {
            _ = try? writeAll(peer, Packets.resetComplete.h4Bytes + Array(Packets.acl.h4Bytes.prefix(3)))
        }
        loop.schedule(after: .milliseconds(3)) { _ = try? writeAll(peer, Array(Packets.acl.h4Bytes.dropFirst(3))) }
        try loop.run()
        XCTAssertEqual(received, [Packets.resetComplete, Packets.acl])
        XCTAssertEqual(failure, .closed)
        transport.close()
    }

    /// With read coalescing, a read of advertising reports pauses reading for the interval:
    /// a burst that arrives meanwhile is delivered in one batch when it ends, not one
    /// callback per packet.
    func testReadCoalescingDeliversABurstInOneBatch() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0])
        let peer = ends[1]
        defer { close(peer); transport.close() }
        let virtual = VirtualEventLoop()
        var batches: [(Instant, Int)] = []
        let driver = TransportDriver(transport: transport, loop: virtual.loop,
                                     onPackets: { batches.append((virtual.now, $0.count)) }, onFailure: { XCTFail("\($0)") })
        driver.readCoalescing = .milliseconds(10)
        driver.start()
        for (index, at) in [Int64(0), 2, 4, 7, 12].enumerated() {
            let report = Packets.advertisingReport(address: UInt8(index + 1), rssi: -50)
            virtual.loop.schedule(after: .milliseconds(at)) { _ = try? writeAll(peer, report.h4Bytes) }
        }
        try virtual.advance(by: .milliseconds(50))
        XCTAssertEqual(batches.map(\.1), [1, 3, 1])
        XCTAssertEqual(batches.map(\.0), [0, 10, 20].map { .zero + .milliseconds($0) })
        driver.stop()
    }

    /// A packet socket (the user channel: one packet per read) holding more reports than one
    /// receive takes is read again at once, not after the gathering window: the read limit
    /// spreads a flood over loop turns and must not cap the door's rate (256 reads per
    /// 40 ms would drop a 10,000 reports/s door to 6,400).
    func testAReceiveCutShortByItsReadLimitReadsAgainWithoutGathering() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0], kind: .packetSocket, readLimit: 4)
        let peer = ends[1]
        defer { close(peer); transport.close() }
        for index in 0 ..< 10 {
            _ = try writeAll(peer, Packets.advertisingReport(address: UInt8(index + 1), rssi: -50).h4Bytes)
        }
        let virtual = VirtualEventLoop()
        var batches: [(Instant, Int)] = []
        let driver = TransportDriver(transport: transport, loop: virtual.loop,
                                     onPackets: { batches.append((virtual.now, $0.count)) }, onFailure: { XCTFail("\($0)") })
        driver.readCoalescing = .milliseconds(40)
        driver.start()
        try virtual.advance(by: .milliseconds(10))
        XCTAssertEqual(batches.map(\.1), [4, 4, 2])
        XCTAssertEqual(batches.map(\.0), [.zero, .zero, .zero])
        XCTAssertTrue(driver.isReadingPaused, "drained: now the reports may gather")
        driver.stop()
    }

    /// A quiet radio still gets its capture onto the disk: the driver flushes it on a timer
    /// (on virtual time: exactly one interval after the packet, and not before).
    func testDriverFlushesACaptureWhileIdle() throws {
        let path = temporaryPath(self, "idle.btsnoop")
        let transport = try XCTUnwrap(try makeTransport(.btsnoop(path: "unused"), capturePath: path) as? CapturingTransport)
        XCTAssertTrue(transport.inner is BTSnoopReplayTransport)
        let scripted = CapturingTransport(wrapping: ScriptedTransport(), path: path)
        try scripted.open()
        defer { scripted.close() }
        let virtual = VirtualEventLoop()
        let driver = TransportDriver(transport: scripted, loop: virtual.loop, onPackets: { _ in }, onFailure: { _ in })
        driver.captureFlushInterval = .seconds(1)
        driver.start()
        try driver.send(Packets.reset)
        let header = BTSnoop.fileHeader(datalink: .h4)
        try virtual.advance(by: .milliseconds(999))
        XCTAssertEqual(try readFile(path), header, "buffered, not yet written")
        try virtual.advance(by: .milliseconds(1))
        XCTAssertEqual(try readFile(path).count, header.count + BTSnoop.recordHeaderLength + Packets.reset.h4Bytes.count)
        XCTAssertEqual(virtual.loop.scheduledTimerCount, 1, "the next flush")
        driver.stop()
        XCTAssertEqual(virtual.loop.scheduledTimerCount, 0, "the flush timer is gone")
    }

    /// Output the socket did not take (EAGAIN, partial writes) stays queued in order and
    /// goes out when the loop reports the descriptor writable.
    func testQueuedOutputDrainsWhenWritable() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        var small: Int32 = 4096
        setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(ends[1], SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let transport = SocketPairTransport(fd: ends[0])
        let peer = ends[1]
        defer { close(peer); transport.close() }
        _ = fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK)

        let loop = EventLoop()
        var failure: TransportError?
        let driver = TransportDriver(transport: transport, loop: loop, onPackets: { _ in }, onFailure: { failure = $0 })
        driver.start()
        // Commands of growing size until the socket stops taking them.
        var expected: [UInt8] = []
        var index = 0
        while !transport.hasPendingOutput && index < 10_000 {
            let packet = HCIPacket(type: .command, payload: [0x01, 0xFC, 200] + [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 200))
            try driver.send(packet)
            expected += packet.h4Bytes
            index += 1
        }
        XCTAssertTrue(transport.hasPendingOutput, "the socket never pushed back")
        for extra in 0 ..< 3 {
            let packet = HCIPacket(type: .command, payload: [0x03, 0x0C, 1, UInt8(extra)])
            try driver.send(packet)
            expected += packet.h4Bytes
        }

        var received: [UInt8] = []
        _ = loop.register(fileDescriptor: peer) {
            var buffer = [UInt8](repeating: 0, count: 1000) // small reads: many partial writes
            let count = read(peer, &buffer, buffer.count)
            if count > 0 { received += buffer[0 ..< count] }
            if received.count >= expected.count { loop.stop() }
        }
        try loop.run()
        XCTAssertNil(failure)
        XCTAssertEqual(received, expected)
        XCTAssertFalse(transport.hasPendingOutput)
    }

    func testAControllerThatStopsReadingFillsTheQueueAndSaysSo() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0])
        defer { close(ends[1]); transport.close() }
        let packet = HCIPacket(type: .command, payload: [0x01, 0xFC, 250] + [UInt8](repeating: 0, count: 250))
        var failure: TransportError?
        for _ in 0 ..< 100_000 where failure == nil {
            do { try transport.send(packet) } catch { failure = error }
        }
        guard case .sendQueueFull? = failure else { return XCTFail("\(String(describing: failure))") }
    }
}

/// The shared descriptor code behind a socketpair, as the fd transports use it.
private final class SocketPairTransport: HCITransport {
    private let stream: DescriptorStream
    init(fd: Int32, kind: DescriptorStream.Kind = .socket, readLimit: Int = DescriptorStream.maximumReadsPerReceive) {
        stream = DescriptorStream(kind: kind, readLimit: readLimit)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        stream.attach(fd)
    }
    var name: String { "socketpair" }
    var isOpen: Bool { stream.isOpen }
    func open() throws(TransportError) {}
    func close() { stream.close() }
    var fileDescriptor: Int32? { stream.isOpen ? stream.fileDescriptor : nil }
    var hasPendingInput: Bool { false }
    var stoppedAtReadLimit: Bool { stream.stoppedAtReadLimit }
    func receive() throws(TransportError) -> [HCIPacket] { try stream.receive() }
    func send(_ packet: HCIPacket) throws(TransportError) { try stream.send(packet) }
    var hasPendingOutput: Bool { stream.hasPendingOutput }
    func flush() throws(TransportError) { try stream.flush() }
    var framingErrors: Int { stream.framingErrors }
    var isExhausted: Bool { false }
}
