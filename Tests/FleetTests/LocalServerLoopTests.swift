import EventLoop
import Glibc
import XCTest
@testable import Fleet

/// The local endpoint on a virtual loop: real loopback sockets, virtual time, so the time
/// limit is exact and nothing waits for it.
final class LocalServerLoopTests: XCTestCase {
    private let limits = RequestConnection.Limits(terminator: Array("\r\n\r\n".utf8), maxRequestBytes: 1_024, timeLimit: .seconds(5))

    private func makeServer(_ virtual: VirtualEventLoop, maxConnections: Int = 4) throws -> LocalServer {
        try LocalServer(loop: virtual.loop, address: .tcp(host: "127.0.0.1", port: 0), limits: limits, maxConnections: maxConnections,
                        answer: { _ in Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8) },
                        refusal: { _ in Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8) })
    }

    /// A server with one client accepted.
    private func serverWithAClient() throws -> (VirtualEventLoop, LocalServer, Int32) {
        let virtual = VirtualEventLoop()
        let server = try makeServer(virtual)
        let client = try connect(server)
        try virtual.runReady()
        XCTAssertEqual(server.openConnections, 1)
        return (virtual, server, client)
    }

    func testAnAnsweredClientIsClosedWhenItHangsUp() throws {
        let (virtual, server, client) = try serverWithAClient()
        defer { close(client) }
        send(client, "GET /metrics HTTP/1.1\r\n\r\n")
        try virtual.runReady()
        XCTAssertEqual(receiveAll(client), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "answered, then the server's side shut")
        shutdown(client, Int32(SHUT_WR))
        try virtual.runReady()
        XCTAssertEqual(server.openConnections, 0)
        XCTAssertEqual(server.timedOut, 0)
    }

    func testASlowClientIsCutOffExactlyAtTheTimeLimit() throws {
        let (virtual, server, client) = try serverWithAClient()
        defer { close(client) }
        send(client, "GET /met")
        try virtual.advance(by: .seconds(5) - .milliseconds(1))
        XCTAssertEqual(server.openConnections, 1, "still within the limit")
        try virtual.advance(by: .milliseconds(1))
        XCTAssertEqual(server.openConnections, 0)
        XCTAssertEqual(server.timedOut, 1)
    }

    func testClientsPastTheMaximumAreTurnedAway() throws {
        let virtual = VirtualEventLoop()
        let server = try makeServer(virtual, maxConnections: 2)
        let clients = try (0 ..< 3).map { _ in try connect(server) }
        defer { clients.forEach { close($0) } }
        try virtual.runReady()
        XCTAssertEqual(server.openConnections, 2)
        XCTAssertEqual(server.turnedAway, 1)
    }

    // MARK: A client taken over for a longer exchange

    /// A server that hands clients whose request starts with "long" to a `LocalStream`.
    private func takingServer(_ virtual: VirtualEventLoop, streams: @escaping (LocalStream) -> Void) throws -> LocalServer {
        let server = try makeServer(virtual)
        server.takeOver = { head, _ in
            guard head.starts(with: Array("long".utf8)) else { return nil }
            return LocalServer.TakeOver(maxLineBytes: 8, accept: streams)
        }
        return server
    }

    func testATakenOverClientTalksInLinesBeyondTheTimeLimitAndReadsTheLastLineBeforeTheEnd() throws {
        let virtual = VirtualEventLoop()
        var stream: LocalStream?
        var lines: [String] = []
        let server = try takingServer(virtual) { taken in
            stream = taken
            taken.onLine = { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        var client = try connect(server)
        // Closed once: below, or here if the test stops before.
        defer { if client >= 0 { close(client) } }
        send(client, "long\r\n\r\n")
        try virtual.runReady()
        let taken = try XCTUnwrap(stream)
        XCTAssertEqual(server.openConnections, 0, "no longer the server's client")
        try virtual.advance(by: .seconds(30))
        XCTAssertTrue(taken.isOpen, "the one-answer time limit is not the stream's")

        taken.send(Array("compare 1\n".utf8))
        XCTAssertEqual(receiveAvailable(client), "compare 1\n")
        send(client, "yes\nn")
        try virtual.runReady()
        send(client, "o\n")
        try virtual.runReady()
        XCTAssertEqual(lines, ["yes\n", "no\n"], "whole lines, however they arrive")

        taken.send(Array("enrolled\n".utf8))
        taken.finish()
        try virtual.runReady()
        XCTAssertEqual(receiveAll(client), "enrolled\n", "the last line, then the end")
        close(client)
        client = -1
        try virtual.runReady()
        server.close()
    }

    func testAFinishedStreamNobodyHoldsLingersUntilTheClientClosesOrTheLingerEnds() throws {
        for clientCloses in [true, false] {
            let virtual = VirtualEventLoop()
            var stream: LocalStream?
            let server = try takingServer(virtual) { taken in stream = taken }
            let client = try connect(server)
            send(client, "long\r\n\r\n")
            try virtual.runReady()
            // The owner's last word, then it lets go at once (as the enrolment does).
            stream?.send(Array("failed bye\n".utf8))
            stream?.finish()
            weak var finished = stream
            stream = nil
            XCTAssertNotNil(finished, "kept by itself while it lingers")
            XCTAssertEqual(receiveAll(client), "failed bye\n", "the last line, then the end of its sending")
            try virtual.advance(by: LocalStream.lingerAfterFinish - .milliseconds(1))
            XCTAssertNotNil(finished, "still there for the client to close first")
            if clientCloses {
                close(client)
                try virtual.runReady()
                XCTAssertNil(finished, "closed when the client closed its side")
            } else {
                try virtual.advance(by: .milliseconds(1))
                XCTAssertNil(finished, "closed at the linger's end")
                close(client)
            }
            server.close()
        }
    }

    func testAnOverlongLineOrAHangUpEndsATakenOverClient() throws {
        for hangsUp in [false, true] {
            let virtual = VirtualEventLoop()
            var stream: LocalStream?
            var closed = 0
            let server = try takingServer(virtual) { taken in
                stream = taken
                taken.onClosed = { closed += 1 }
            }
            let client = try connect(server)
            send(client, "long\r\n\r\n")
            try virtual.runReady()
            if hangsUp {
                close(client)
            } else {
                send(client, "123456789")
            }
            try virtual.runReady()
            XCTAssertEqual(closed, 1, hangsUp ? "a hang-up" : "nine bytes without a line end, past the limit of eight")
            XCTAssertEqual(stream?.isOpen, false)
            stream?.send(Array("late\n".utf8))
            if !hangsUp {
                XCTAssertEqual(receiveAll(client), "", "nothing after the end")
                close(client)
            }
            server.close()
        }
    }

    // MARK: A plain client

    private struct SocketFailure: Error { var errno: Int32 }

    private func connect(_ server: LocalServer) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = (server.boundPort ?? 0).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw SocketFailure(errno: errno)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        // Every send leaves at once: Nagle would hold a small one back until the server's
        // delayed ACK, and a turn of the loop would find nothing to read.
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, bytes.count)
    }

    /// What the server has sent so far, without waiting for its end.
    private func receiveAvailable(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 1_024)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
    }

    /// What the server sent, up to its end of file (nil if it has not ended).
    private func receiveAll(_ fd: Int32) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1_024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { received += buffer.prefix(count); continue }
            return count == 0 ? String(decoding: received, as: UTF8.self) : nil
        }
    }
}
