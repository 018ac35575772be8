import EventLoop
import HCI

/// `tcp:HOST:PORT`: H4 over TCP, as virtual and remote controllers serve it (Bumble's
/// `tcp-server:`, Android's Root-Canal).
///
/// The connect is bounded by `connectTimeout`; afterwards the socket is non-blocking with
/// TCP_NODELAY, since HCI commands are small and latency matters more than segment count.
public final class TCPTransport: HCITransport {
    public let host: String
    public let port: UInt16
    public var connectTimeout: Duration
    private let stream = DescriptorStream(kind: .socket)

    public init(host: String, port: UInt16, connectTimeout: Duration = .seconds(5)) {
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
    }

    public var name: String { TransportSpec.tcp(host: host, port: port).description }
    public var isOpen: Bool { stream.isOpen }
    public var fileDescriptor: Int32? { stream.isOpen ? stream.fileDescriptor : nil }
    public var hasPendingInput: Bool { false }
    public var hasPendingOutput: Bool { stream.hasPendingOutput }
    public var framingErrors: Int { stream.framingErrors }
    public var isExhausted: Bool { false }

    public func open() throws(TransportError) {
        guard !stream.isOpen else { return }
        stream.attach(try TCPSocket.connect(host: host, port: port, timeout: connectTimeout))
    }

    public func close() { stream.close() }
    public func receive() throws(TransportError) -> [HCIPacket] { try stream.receive() }
    public func send(_ packet: HCIPacket) throws(TransportError) { try stream.send(packet) }
    public func flush() throws(TransportError) { try stream.flush() }
}
