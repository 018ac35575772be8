#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// A bound AF_UNIX datagram socket standing in for journald or the service manager.
public final class DatagramReceiver {
    public let fd: Int32
    public let address: String
    private let path: String?

    /// A socket at a fresh path in /tmp, or in the abstract namespace (`@…`).
    public init(abstract: Bool = false) throws {
        let name = "bg-journal-test-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        address = abstract ? "@" + name : "/tmp/" + name
        path = abstract ? nil : "/tmp/" + name
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw XCTSkip("no AF_UNIX datagram sockets here") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8] = abstract ? [0] + Array(name.utf8) : Array("/tmp/\(name)".utf8) + [0]
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            throw XCTSkip("cannot bind a datagram socket: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    /// The next datagram already queued (sends to AF_UNIX datagram sockets are queued
    /// synchronously, so no waiting is needed), or nil.
    public func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        guard count >= 0 else { return nil }
        return Array(buffer.prefix(count))
    }
}
