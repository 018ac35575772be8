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
        driver?.readGathering = .fixed(.seconds(60))
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

    /// With read gathering, a read of advertising reports pauses reading for the interval:
    /// a burst that arrives meanwhile is delivered in one batch when it ends, not one
    /// callback per packet.
    func testReadGatheringDeliversABurstInOneBatch() throws {
        let got = try batches(gathering: .fixed(.milliseconds(10)), for: .milliseconds(50)) { at, peer, _ in
            for (index, time) in [Int64(0), 2, 4, 7, 12].enumerated() {
                let report = Packets.advertisingReport(address: UInt8(index + 1), rssi: -50).h4Bytes
                at(time) { _ = try? writeAll(peer, report) }
            }
        }
        XCTAssertEqual(got.map(\.packets.count), [1, 3, 1])
        XCTAssertEqual(got.map(\.milliseconds), [0, 10, 20])
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
        driver.readGathering = .fixed(.milliseconds(40))
        driver.start()
        try virtual.advance(by: .milliseconds(10))
        XCTAssertEqual(batches.map(\.1), [4, 4, 2])
        XCTAssertEqual(batches.map(\.0), [.zero, .zero, .zero])
        XCTAssertTrue(driver.isReadingPaused, "drained: now the reports may gather")
        driver.stop()
    }

    /// A driver over a socketpair on virtual time, and the times and sizes of the batches
    /// it delivers; the peer's writes and the driver's sends come from `script`'s timers.
    private func batches(
        gathering: ReadGathering, answerWait: Duration = .seconds(60), for duration: Duration,
        offerInPlace: ((HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool)? = nil,
        script: (_ at: (Int64, @escaping () -> Void) -> Void, _ peer: Int32, _ driver: TransportDriver) -> Void
    ) throws -> [(milliseconds: Int64, packets: [HCIPacket])] {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0])
        let peer = ends[1]
        defer { close(peer); transport.close() }
        let virtual = VirtualEventLoop()
        var batches: [(Int64, [HCIPacket])] = []
        let driver = TransportDriver(transport: transport, loop: virtual.loop,
                                     onPackets: { batches.append((virtual.now.nanoseconds / 1_000_000, $0)) },
                                     onFailure: { XCTFail("\($0)") })
        driver.readGathering = gathering
        driver.answerWait = answerWait
        driver.offerInPlace = offerInPlace
        driver.start()
        script({ milliseconds, body in virtual.loop.schedule(after: .milliseconds(milliseconds), body) }, peer, driver)
        try virtual.advance(by: duration)
        driver.stop()
        return batches
    }

    /// A decision due while reports gather reads them first (`readWaitingInput`): the
    /// report written at 10 ms is read at 15 ms, not when the 40 ms pause ends; a second
    /// call while nothing pauses reads nothing more.
    func testReadingWaitingInputEndsThePauseAtOnce() throws {
        let report = Packets.advertisingReport(address: 1, rssi: -50).h4Bytes
        let got = try batches(gathering: .fixed(.milliseconds(40)), for: .milliseconds(100)) { at, peer, driver in
            at(0) { _ = try? writeAll(peer, report) }
            at(10) { _ = try? writeAll(peer, report) }
            at(15) {
                XCTAssertTrue(driver.isReadingPaused)
                driver.readWaitingInput()
            }
            at(16) { driver.readWaitingInput() }
        }
        XCTAssertEqual(got.map(\.milliseconds), [0, 15])
    }

    /// A decision due in the same turn as input that waits, reading not paused (the loop
    /// was held up and its timers come first): `readWaitingInput` reads it before the
    /// decision, not after it.
    func testReadingWaitingInputReadsWhatWaitsWhenReadingIsNotPaused() throws {
        let report = Packets.advertisingReport(address: 1, rssi: -50).h4Bytes
        var offered = 0
        var offeredBeforeTheDecision: Int?
        let got = try batches(gathering: .fixed(.milliseconds(40)), for: .milliseconds(100),
                              offerInPlace: { _, _ in offered += 1; return false }) { at, peer, driver in
            at(0) { _ = try? writeAll(peer, report) }
            at(60) {
                XCTAssertFalse(driver.isReadingPaused, "the pause after the read at 0 ms has ended")
                _ = try? writeAll(peer, report)
                driver.readWaitingInput()
                offeredBeforeTheDecision = offered
            }
        }
        XCTAssertEqual(offeredBeforeTheDecision, 2, "the report waiting at 60 ms is read before the decision")
        XCTAssertEqual(got.map(\.milliseconds), [0, 60])
    }

    /// A command sent keeps reading live until its Command Complete is read, however long
    /// `answerWait` is; then reports gather again.
    func testACommandIsAwaitedUntilItsAnswerThenReportsGatherAgain() throws {
        let report = Packets.advertisingReport(address: 1, rssi: -50).h4Bytes
        let got = try batches(gathering: .fixed(.milliseconds(40)), for: .milliseconds(100)) { at, peer, driver in
            at(0) { _ = try? writeAll(peer, report) }
            at(5) { try? driver.send(Packets.reset) }
            at(6) { _ = try? writeAll(peer, report) }
            at(7) { _ = try? writeAll(peer, Packets.resetComplete.h4Bytes) }
            at(8) { _ = try? writeAll(peer, report) }
            at(9) { _ = try? writeAll(peer, report) }
            at(20) { _ = try? writeAll(peer, report) }
        }
        // 0: read, pause; 5: the send ends the pause; 6: read at once (answer awaited);
        // 7: the answer; 8: reports alone again, pause to 48, when 9's and 20's come together.
        XCTAssertEqual(got.map(\.milliseconds), [0, 6, 7, 8, 48])
        XCTAssertEqual(got.map(\.packets.count), [1, 1, 1, 1, 2])
    }

    /// ACL data sent (an ATT request) keeps reading live for `answerWait`: the peer's answer
    /// comes some connection events later and cannot be told from other ACL data here.
    func testDataSentKeepsReadingLiveForTheAnswerWait() throws {
        let report = Packets.advertisingReport(address: 1, rssi: -50).h4Bytes
        let got = try batches(gathering: .fixed(.milliseconds(40)), answerWait: .milliseconds(100), for: .milliseconds(200)) { at, peer, driver in
            at(5) { try? driver.send(Packets.acl) }
            at(6) { _ = try? writeAll(peer, report) }
            at(50) { _ = try? writeAll(peer, report) }
            at(120) { _ = try? writeAll(peer, report) }
            at(130) { _ = try? writeAll(peer, report) }
        }
        XCTAssertEqual(got.map(\.milliseconds), [6, 50, 120, 160])
    }

    /// At a steady rate the pause settles where a wake-up finds `reportsPerWakeUp` reports.
    func testThePauseFollowsTheRate() throws {
        let gathering = ReadGathering(reportsPerWakeUp: 50, shortest: .milliseconds(10), longest: .milliseconds(250))
        let got = try batches(gathering: gathering, for: .milliseconds(1_000)) { at, peer, _ in
            // 500 reports a second, one every 2 ms: 50 take 100 ms.
            for tick in 0 ..< 200 {
                let report = Packets.advertisingReport(address: UInt8(tick % 200 + 1), rssi: -50).h4Bytes
                at(Int64(tick) * 2) { _ = try? writeAll(peer, report) }
            }
        }
        let gaps = zip(got.dropFirst(), got).map { $0.milliseconds - $1.milliseconds }
        // The first read (at 0) pauses for the shortest, nothing being measured yet; the
        // second finds 5 reports in those 10 ms, so 50 take 100 ms; and so on at that rate
        // until the last 44 (written from 312 to 398 ms).
        XCTAssertEqual(gaps, [10, 100, 100, 100, 100])
        XCTAssertEqual(got.map(\.packets.count), [1, 5, 50, 50, 50, 44])
    }

    /// Offered in place: reports are taken in order, the first packet declined and all after
    /// it come as packets, and a read whose packets were all taken still ends in
    /// `onPackets` (with none), so the owner knows the read is over.
    func testPacketsOfferedInPlaceAreTakenInOrderUntilOneIsDeclined() throws {
        var taken: [HCIPacket] = []
        let reports = (1 ... 3).map { Packets.advertisingReport(address: UInt8($0), rssi: -50) }
        let got = try batches(gathering: .fixed(.milliseconds(40)), for: .milliseconds(100), offerInPlace: { type, payload in
            let packet = HCIPacket(type: type, payload: Array(payload))
            guard packet.isAdvertisingReport else { return false }
            taken.append(packet)
            return true
        }) { at, peer, driver in
            at(0) { _ = try? writeAll(peer, reports[0].h4Bytes + reports[1].h4Bytes) }
            at(50) { _ = try? writeAll(peer, reports[2].h4Bytes + Packets.resetComplete.h4Bytes + reports[0].h4Bytes) }
        }
        XCTAssertEqual(got.map(\.milliseconds), [0, 50])
        XCTAssertEqual(got.map(\.packets), [[], [Packets.resetComplete, reports[0]]], "all taken; then the answer and what came after it")
        XCTAssertEqual(taken, [reports[0], reports[1], reports[2]])
    }

    /// A close from inside an offer (a callback that stops the transport) ends the
    /// offering: the framer is not touched while its buffer is lent out, and nothing of the
    /// old connection comes back.
    func testClosingFromInsideAnOfferEndsIt() throws {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends), 0)
        let transport = SocketPairTransport(fd: ends[0])
        defer { close(ends[1]) }
        try writeAll(ends[1], (1 ... 3).flatMap { Packets.advertisingReport(address: UInt8($0), rssi: -50).h4Bytes } + Packets.resetComplete.h4Bytes)
        var offered = 0
        let received = try transport.receive { _, _ in
            offered += 1
            transport.close()
            return true
        }
        XCTAssertEqual(offered, 1)
        XCTAssertEqual(received.taken, 1)
        XCTAssertEqual(received.rest, [])
        XCTAssertFalse(transport.isOpen)
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
    func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket]) {
        try stream.receive(offering: take)
    }
    func send(_ packet: HCIPacket) throws(TransportError) { try stream.send(packet) }
    var hasPendingOutput: Bool { stream.hasPendingOutput }
    func flush() throws(TransportError) { try stream.flush() }
    var framingErrors: Int { stream.framingErrors }
    var isExhausted: Bool { false }
}
