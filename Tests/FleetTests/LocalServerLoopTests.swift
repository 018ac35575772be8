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
        return fd
    }

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, bytes.count)
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
