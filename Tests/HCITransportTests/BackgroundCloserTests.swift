import Glibc
import XCTest
@testable import HCITransport

/// A close(2) that takes as long as the test wants: it waits for a byte on a pipe before
/// closing, the way the kernel's close of a user channel waits for its Reset to time out.
private final class SlowClose: @unchecked Sendable {
    private let gateRead: Int32
    private let gateWrite: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXFailure(call: "pipe", errno: errno) }
        gateRead = ends[0]
        gateWrite = ends[1]
    }

    deinit {
        Glibc.close(gateRead)
        Glibc.close(gateWrite)
    }

    /// The close function to inject.
    var function: @Sendable (Int32) -> Void {
        { [gateRead] fileDescriptor in
            var byte: UInt8 = 0
            while read(gateRead, &byte, 1) < 0 && errno == EINTR {}
            Glibc.close(fileDescriptor)
        }
    }

    /// Lets one waiting (or future) close go through.
    func release() {
        var byte: UInt8 = 1
        _ = write(gateWrite, &byte, 1)
    }
}

private func socketPair() throws -> (Int32, Int32) {
    var ends: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { throw POSIXFailure(call: "socketpair", errno: errno) }
    return (ends[0], ends[1])
}

private func isOpenDescriptor(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) >= 0 }

private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

final class BackgroundCloserTests: XCTestCase {
    func testCloseReturnsAtOnceWhileTheDescriptorIsClosedInTheBackground() throws {
        let slow = try SlowClose()
        let closer = BackgroundCloser(closeDescriptor: slow.function)
        let (ours, peer) = try socketPair()
        defer { Glibc.close(peer) }

        // Returns although the close cannot finish until the gate opens below: had it
        // closed on this thread, the test would hang here.
        closer.close(ours, key: "hci0")
        XCTAssertTrue(closer.isClosing("hci0"))
        XCTAssertFalse(closer.isClosing("hci1"), "only the adapter being closed is busy")
        XCTAssertTrue(isOpenDescriptor(ours), "still being closed")

        slow.release()
        XCTAssertTrue(closer.waitUntilClosed("hci0", timeout: .seconds(30)))
        XCTAssertFalse(closer.isClosing("hci0"))
        XCTAssertFalse(isOpenDescriptor(ours))
        var byte: UInt8 = 0
        XCTAssertEqual(read(peer, &byte, 1), 0, "the peer sees the end once the close went through")
    }

    func testTwoClosesOfOneAdapterKeepItClosingUntilBothFinished() throws {
        let slow = try SlowClose()
        let closer = BackgroundCloser(closeDescriptor: slow.function)
        let (first, firstPeer) = try socketPair()
        let (second, secondPeer) = try socketPair()
        defer { Glibc.close(firstPeer); Glibc.close(secondPeer) }
        closer.close(first, key: "hci0")
        closer.close(second, key: "hci0")

        // One close goes through (which one is up to the threads); its peer sees the end.
        slow.release()
        var peers = [pollfd(fd: firstPeer, events: Int16(POLLIN), revents: 0),
                     pollfd(fd: secondPeer, events: Int16(POLLIN), revents: 0)]
        var ready: Int32
        repeat { ready = poll(&peers, 2, 30_000) } while ready < 0 && errno == EINTR
        XCTAssertEqual(ready, 1, "exactly one of the two closed")
        XCTAssertTrue(closer.isClosing("hci0"), "the other is still under way")

        slow.release()
        XCTAssertTrue(closer.waitUntilClosed("hci0", timeout: .seconds(30)))
        XCTAssertFalse(closer.isClosing("hci0"))
        XCTAssertFalse(isOpenDescriptor(first))
        XCTAssertFalse(isOpenDescriptor(second))
    }

    func testWaitingAtShutdownGivesUpAfterItsBound() throws {
        let slow = try SlowClose()
        let closer = BackgroundCloser(closeDescriptor: slow.function)
        let (ours, peer) = try socketPair()
        defer { Glibc.close(peer) }
        closer.close(ours, key: "hci0")

        let started = monotonicSeconds()
        XCTAssertFalse(closer.waitUntilClosed("hci0", timeout: .milliseconds(300)), "the close cannot have finished")
        let waited = monotonicSeconds() - started
        XCTAssertGreaterThanOrEqual(waited, 0.29, "waited out the bound")
        XCTAssertLessThan(waited, 10, "and not much longer")
        XCTAssertTrue(closer.isClosing("hci0"))

        // Nothing to wait for on an adapter that is not closing.
        XCTAssertTrue(closer.waitUntilClosed("hci1", timeout: .seconds(30)))

        slow.release()
        XCTAssertTrue(closer.waitUntilClosed("hci0", timeout: .seconds(30)))
        XCTAssertFalse(isOpenDescriptor(ours), "true only once the descriptor is closed")
    }

    func testUserChannelCloseIsHandedOverAndAReopenWaitsForIt() throws {
        let slow = try SlowClose()
        let closer = BackgroundCloser(closeDescriptor: slow.function)
        // An index no machine has, so the open after the close fails for its own reason
        // (no Bluetooth here, no such adapter elsewhere) instead of taking a real adapter.
        let transport = UserChannelTransport(index: 0xFFFE, closer: closer)
        let (ours, peer) = try socketPair()
        defer { Glibc.close(peer) }
        transport.stream.attach(ours)
        XCTAssertTrue(transport.isOpen)

        transport.close()
        XCTAssertFalse(transport.isOpen)
        XCTAssertTrue(closer.isClosing("hci65534"))
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertEqual(error as? TransportError, .adapterStillClosing(index: 0xFFFE))
            XCTAssertTrue("\(error)".contains("hci65534 is still being handed back to the kernel"), "\(error)")
        }
        XCTAssertFalse(transport.waitUntilClosed(timeout: .milliseconds(50)))

        slow.release()
        XCTAssertTrue(transport.waitUntilClosed(timeout: .seconds(30)))
        XCTAssertFalse(isOpenDescriptor(ours))
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertNotEqual(error as? TransportError, .adapterStillClosing(index: 0xFFFE), "the close is over")
        }
    }

    func testOtherDescriptorTransportsCloseAtOnce() throws {
        let transport = TCPTransport(host: "127.0.0.1", port: 9)
        let (ours, peer) = try socketPair()
        defer { Glibc.close(peer) }
        transport.stream.attach(ours)
        transport.close()
        XCTAssertFalse(isOpenDescriptor(ours), "closed before close() returned")
        XCTAssertTrue(transport.waitUntilClosed(timeout: .zero))
    }
}
