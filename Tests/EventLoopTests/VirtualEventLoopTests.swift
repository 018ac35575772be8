import Glibc
import XCTest
@testable import EventLoop

final class VirtualEventLoopTests: XCTestCase {
    func testAdvanceRunsDueTimersInDeadlineOrderAtTheirDeadlines() throws {
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        var fired: [(String, Instant)] = []
        func note(_ name: String) { fired.append((name, loop.now)) }
        loop.schedule(after: .seconds(3)) { note("c") }
        loop.schedule(after: .seconds(1)) {
            note("a")
            // Scheduled while advancing, inside the window: runs in this advance, in order.
            loop.schedule(after: .milliseconds(500)) { note("a+0.5") }
            // Due at once: runs at this same instant.
            loop.schedule(after: .zero) { note("a+0") }
        }
        loop.schedule(after: .seconds(2)) { note("b1") }
        loop.schedule(after: .seconds(2)) { note("b2") }
        loop.schedule(after: .seconds(10)) { note("late") }

        try virtual.advance(by: .seconds(5))
        XCTAssertEqual(fired.map(\.0), ["a", "a+0", "a+0.5", "b1", "b2", "c"])
        XCTAssertEqual(fired.map(\.1), [1, 1, 1.5, 2, 2, 3].map { .zero + .milliseconds(Int64($0 * 1000)) })
        XCTAssertEqual(virtual.now, .zero + .seconds(5), "the clock ends at the target")
        XCTAssertEqual(loop.scheduledTimerCount, 1)

        try virtual.advance(to: .zero + .seconds(10))
        XCTAssertEqual(fired.last?.0, "late")
        XCTAssertEqual(fired.last?.1, .zero + .seconds(10), "a deadline at the window's end is inside it")
    }

    func testNothingHappensBeforeItsTime() throws {
        let virtual = VirtualEventLoop()
        var fired = false
        virtual.loop.schedule(after: .milliseconds(1_000)) { fired = true }
        try virtual.advance(by: .milliseconds(999))
        XCTAssertFalse(fired)
        try virtual.runReady()
        XCTAssertFalse(fired, "runReady never moves the clock")
        try virtual.advance(by: .milliseconds(1))
        XCTAssertTrue(fired)
    }

    func testStopEndsTheAdvanceAtThatInstant() throws {
        let virtual = VirtualEventLoop()
        var later = false
        virtual.loop.schedule(after: .seconds(2)) { virtual.loop.stop() }
        virtual.loop.schedule(after: .seconds(3)) { later = true }
        try virtual.advance(by: .seconds(60))
        XCTAssertEqual(virtual.now, .zero + .seconds(2))
        XCTAssertFalse(later)
        try virtual.advance(by: .seconds(1))
        XCTAssertTrue(later, "the next advance goes on from there")
    }

    func testRunOnVirtualTimeJumpsFromTimerToTimer() throws {
        let virtual = VirtualEventLoop()
        var fired: [Instant] = []
        virtual.loop.schedule(after: .seconds(3_600)) { fired.append(virtual.now) }
        virtual.loop.schedule(after: .milliseconds(1)) { fired.append(virtual.now) }
        try virtual.loop.run() // ends when no timer is left: an hour, in no time
        XCTAssertEqual(fired, [.zero + .milliseconds(1), .zero + .seconds(3_600)])
    }

    func testACallbackCannotRunTheLoopInsideAnAdvance() throws {
        let virtual = VirtualEventLoop()
        var refused: EventLoopError?
        virtual.loop.schedule(after: .seconds(1)) {
            do { try virtual.loop.run() } catch { refused = error as? EventLoopError }
        }
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(refused, .alreadyRunning)
    }

    func testPendingSourcesRunUntilTheyHaveNoWork() throws {
        let virtual = VirtualEventLoop()
        var queue = [1, 2, 3]
        var taken: [Int] = []
        _ = virtual.loop.registerPendingSource(hasWork: { !queue.isEmpty }) { taken.append(queue.removeFirst()) }
        try virtual.runReady()
        XCTAssertEqual(taken, [1, 2, 3])
        virtual.loop.schedule(after: .seconds(1)) { queue.append(4) }
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(taken, [1, 2, 3, 4])
    }

    // MARK: Scripted descriptors

    func testFedBytesAreReadAtTheInstantTheyAreFed() throws {
        let virtual = VirtualEventLoop()
        let descriptor = try virtual.makeDescriptor()
        var reads: [(Instant, [UInt8])] = []
        _ = virtual.loop.register(fileDescriptor: descriptor.fileDescriptor) {
            reads.append((virtual.now, Self.readAvailable(descriptor.fileDescriptor)))
        }
        try virtual.advance(by: .seconds(1))
        XCTAssertTrue(reads.isEmpty, "nothing fed, nothing readable")
        virtual.loop.schedule(after: .seconds(1)) { try? descriptor.feed([1, 2, 3]) }
        try virtual.advance(by: .seconds(5))
        XCTAssertEqual(reads.map(\.0), [.zero + .seconds(2)])
        XCTAssertEqual(reads.map(\.1), [[1, 2, 3]])
    }

    /// Read coalescing on virtual time: while reading is paused input gathers, and it is
    /// read in one go when reading resumes.
    func testPausedReadingGathersInputUntilResumed() throws {
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let descriptor = try virtual.makeDescriptor()
        var reads: [(Instant, [UInt8])] = []
        var registration: EventLoop.Registration!
        registration = loop.register(fileDescriptor: descriptor.fileDescriptor) {
            reads.append((virtual.now, Self.readAvailable(descriptor.fileDescriptor)))
            // As the transport driver does: after a read, let the next burst gather for 10 ms.
            loop.setReadingPaused(registration, true)
            loop.schedule(after: .milliseconds(10)) { loop.setReadingPaused(registration, false) }
        }
        for (at, byte) in [(0, 1), (2, 2), (4, 3), (12, 4)] as [(Int64, UInt8)] {
            loop.schedule(after: .milliseconds(at)) { try? descriptor.feed([byte]) }
        }
        try virtual.advance(by: .milliseconds(50))
        XCTAssertEqual(reads.map(\.1), [[1], [2, 3], [4]])
        XCTAssertEqual(reads.map(\.0), [0, 10, 20].map { .zero + .milliseconds($0) })
    }

    func testOutputTheLoopSideWritesAndAPeerThatStopsTakingIt() throws {
        let virtual = VirtualEventLoop()
        let loop = virtual.loop
        let descriptor = try virtual.makeDescriptor()
        let registration = loop.register(fileDescriptor: descriptor.fileDescriptor) {}
        var writable = 0
        descriptor.acceptsOutput = false
        loop.setWritableCallback(registration) { writable += 1 }
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(writable, 0, "a peer that stopped reading")
        descriptor.acceptsOutput = true
        loop.setWritableCallback(registration) {
            writable += 1
            _ = write(descriptor.fileDescriptor, [7, 8] as [UInt8], 2)
            loop.setWritableCallback(registration, nil)
        }
        try virtual.runReady()
        XCTAssertEqual(writable, 1)
        XCTAssertEqual(try descriptor.takeWritten(), [7, 8])
        XCTAssertEqual(try descriptor.takeWritten(), [])
    }

    func testHangUpReadsEndOfFile() throws {
        let virtual = VirtualEventLoop()
        let descriptor = try virtual.makeDescriptor()
        var ended = false
        var registration: EventLoop.Registration?
        registration = virtual.loop.register(fileDescriptor: descriptor.fileDescriptor) {
            var byte: UInt8 = 0
            if read(descriptor.fileDescriptor, &byte, 1) == 0 {
                ended = true
                if let registration { virtual.loop.unregister(registration) }
            }
        }
        descriptor.hangUp()
        try virtual.runReady()
        XCTAssertTrue(ended)
    }

    static func readAvailable(_ fileDescriptor: Int32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fileDescriptor, &buffer, buffer.count)
        return count > 0 ? Array(buffer.prefix(count)) : []
    }
}
