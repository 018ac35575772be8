#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// Why a datagram to journald or the service manager did not go out.
public enum DatagramError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The address is empty or longer than `sun_path` holds.
    case badAddress(String)
    case socket(errno: Int32)
    case send(address: String, errno: Int32)

    public var description: String {
        switch self {
        case .badAddress(let address): "unusable AF_UNIX address \"\(address)\" (empty or longer than 107 bytes)"
        case .socket(let code): "cannot create an AF_UNIX datagram socket: \(String(cString: strerror(code)))"
        case .send(let address, let code): "sending to \(address) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// An unconnected, non-blocking AF_UNIX datagram socket that sends to one address: a path,
/// or an abstract name written `@name` (as systemd writes NOTIFY_SOCKET).
///
/// Unconnected so that a journald or systemd restarted under us (a new socket at the same
/// path) is reached by the next datagram; non-blocking so that a stalled receiver can
/// never stall the event loop: a full queue drops the datagram and says so.
public final class UnixDatagramSender: Sendable {
    public let address: String
    private let fd: Int32
    private let addressBytes: [UInt8]

    public init(address: String) throws(DatagramError) {
        var bytes: [UInt8]
        if address.hasPrefix("@") {
            bytes = [0] + Array(address.utf8.dropFirst())
        } else {
            bytes = Array(address.utf8) + [0]
        }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard address.utf8.count > (address.hasPrefix("@") ? 1 : 0), bytes.count <= capacity else { throw .badAddress(address) }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .socket(errno: errno) }
        self.address = address
        self.fd = fd
        self.addressBytes = bytes
    }

    deinit {
        close(fd)
    }

    /// Sends `payload` as one datagram.
    public func send(_ payload: [UInt8]) throws(DatagramError) {
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { path in
            for (index, byte) in addressBytes.enumerated() where index < path.count { path[index] = byte }
        }
        // Abstract names are counted exactly (no terminator); paths include their NUL.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + addressBytes.count)
        let sent = SystemCall.retryingInterrupts {
            payload.withUnsafeBytes { buffer in
                withUnsafePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), address, length)
                    }
                }
            }
        }
        if sent < 0 { throw .send(address: address, errno: errno) }
    }
}
