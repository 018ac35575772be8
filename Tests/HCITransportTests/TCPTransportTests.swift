import Glibc
import HCI
import XCTest
@testable import HCITransport

final class TCPTransportTests: XCTestCase {
    /// A listening socket on an ephemeral loopback port.
    private func listen(ipv6: Bool = false, listening: Bool = true) throws -> (fd: Int32, port: UInt16) {
        let family = ipv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXFailure(call: "socket", errno: errno) }
        addTeardownBlock { close(fd) }
        var result: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else { throw POSIXFailure(call: "bind", errno: errno) }
        guard !listening || Glibc.listen(fd, 4) == 0 else { throw POSIXFailure(call: "listen", errno: errno) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = withUnsafePointer(to: &storage) { pointer in
            ipv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        return (fd, port)
    }

    /// `closesPeer`: the teardown closes the peer (false when the test closes it itself:
    /// closed twice, the number could by then be another test's file).
    private func connectedPair(ipv6: Bool = false, closesPeer: Bool = true) throws -> (TCPTransport, Int32) {
        let server = try listen(ipv6: ipv6)
        let transport = TCPTransport(host: ipv6 ? "::1" : "127.0.0.1", port: server.port)
        try transport.open()
        addTeardownBlock { transport.close() }
        let peer = accept(server.fd, nil, nil)
        guard peer >= 0 else { throw POSIXFailure(call: "accept", errno: errno) }
        if closesPeer { addTeardownBlock { close(peer) } }
        return (transport, peer)
    }

    func testPacketsComeOutWholeWhateverTheChunks() throws {
        let (transport, peer) = try connectedPair()
        let expected = [Packets.resetComplete, Packets.advertisingReport(address: 1, rssi: -60), Packets.acl,
                        Packets.advertisingReport(address: 2, rssi: -70), Packets.disconnectionComplete]
        let stream = expected.flatMap(\.h4Bytes)
        // One byte at a time for the first packets, then odd-sized chunks.
        var chunks: [[UInt8]] = stream.prefix(20).map { [$0] }
        var rest = Array(stream.dropFirst(20))
        var size = 3
        while !rest.isEmpty {
            chunks.append(Array(rest.prefix(size)))
            rest.removeFirst(min(size, rest.count))
            size = size == 3 ? 7 : (size == 7 ? 1 : 3)
        }
        var received: [HCIPacket] = []
        for chunk in chunks {
            try writeAll(peer, chunk)
            // Whatever is readable now, partial packets included.
            if let fd = transport.fileDescriptor, waitReadable(fd) { received += try transport.receive() }
        }
        received += try receivePackets(transport, count: expected.count - received.count)
        XCTAssertEqual(received, expected)
        XCTAssertEqual(transport.framingErrors, 0)
    }

    func testGarbageIsSkippedAndCounted() throws {
        let (transport, peer) = try connectedPair()
        try writeAll(peer, [0xFF, 0x00] + Packets.resetComplete.h4Bytes)
        XCTAssertEqual(try receivePackets(transport, count: 1), [Packets.resetComplete])
        XCTAssertEqual(transport.framingErrors, 2)
    }

    func testSendReachesThePeer() throws {
        let (transport, peer) = try connectedPair()
        try transport.send(Packets.reset)
        try transport.send(Packets.readBDAddr)
        XCTAssertFalse(transport.hasPendingOutput)
        XCTAssertEqual(try readExactly(peer, 8), Packets.reset.h4Bytes + Packets.readBDAddr.h4Bytes)
    }

    func testIPv6Loopback() throws {
        let (transport, peer): (TCPTransport, Int32)
        do {
            (transport, peer) = try connectedPair(ipv6: true)
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        XCTAssertEqual(transport.name, "tcp:[::1]:\(transport.port)")
        try writeAll(peer, Packets.resetComplete.h4Bytes)
        XCTAssertEqual(try receivePackets(transport, count: 1), [Packets.resetComplete])
    }

    func testPeerCloseGivesClosedAfterTheLastPackets() throws {
        let (transport, peer) = try connectedPair()
        try writeAll(peer, Packets.resetComplete.h4Bytes)
        shutdown(peer, Int32(SHUT_WR))
        var packets: [HCIPacket] = []
        var failure: Error?
        while failure == nil, let fd = transport.fileDescriptor, waitReadable(fd) {
            do { packets += try transport.receive() } catch { failure = error }
        }
        XCTAssertEqual(packets, [Packets.resetComplete])
        XCTAssertEqual(failure as? TransportError, .closed)
    }

    func testSendToAClosedPeerIsAnErrorNotSIGPIPE() throws {
        let (transport, peer) = try connectedPair(closesPeer: false)
        close(peer)
        // The first write may still be accepted locally; the reset arrives after it.
        var failure: TransportError?
        for _ in 0 ..< 100 where failure == nil {
            do {
                try transport.send(Packets.reset)
            } catch {
                failure = error
            }
            if let fd = transport.fileDescriptor { _ = waitReadable(fd, milliseconds: 50) }
        }
        XCTAssertEqual(failure, .closed)
    }

    func testRefusedConnectionNamesTheAddress() throws {
        // A port that is bound but not listening: connecting there is refused.
        let server = try listen(listening: false)
        let transport = TCPTransport(host: "127.0.0.1", port: server.port)
        XCTAssertThrowsError(try transport.open()) { error in
            XCTAssertEqual(error as? TransportError, .connectFailed(host: "127.0.0.1", port: server.port, errno: ECONNREFUSED))
            XCTAssertTrue("\(error)".contains("127.0.0.1:\(server.port)"))
        }
        XCTAssertFalse(transport.isOpen)
    }

    func testUnresolvableHost() {
        let transport = TCPTransport(host: "no host", port: 1)
        XCTAssertThrowsError(try transport.open()) { error in
            guard case .hostNotFound(let host, _)? = error as? TransportError else { return XCTFail("\(error)") }
            XCTAssertEqual(host, "no host")
        }
    }
}
