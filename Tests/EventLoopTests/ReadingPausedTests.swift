import Glibc
import XCTest
@testable import EventLoop

final class ReadingPausedTests: XCTestCase {
    /// While reading is paused, input waits in the descriptor; resumed, it is read in one go.
    func testPausedDescriptorIsNotReadUntilResumed() throws {
        let loop = EventLoop()
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        var reads: [[UInt8]] = []
        var registration: EventLoop.Registration?
        registration = loop.register(fileDescriptor: readEnd) {
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = read(readEnd, &buffer, buffer.count)
            if count > 0 { reads.append(Array(buffer.prefix(count))) }
            if let registration { loop.unregister(registration) }
        }
        guard let registration else { return XCTFail("not registered") }
        loop.setReadingPaused(registration, true)
        var readsWhilePaused = -1
        loop.schedule(after: .milliseconds(2)) { _ = write(writeEnd, [1] as [UInt8], 1) }
        loop.schedule(after: .milliseconds(4)) { _ = write(writeEnd, [2] as [UInt8], 1) }
        loop.schedule(after: .milliseconds(30)) {
            readsWhilePaused = reads.count
            loop.setReadingPaused(registration, false)
        }
        try loop.run() // ends once the descriptor is unregistered and the timers are done
        XCTAssertEqual(readsWhilePaused, 0)
        XCTAssertEqual(reads, [[1, 2]])
    }
}
