import EventLoop
import HCI

/// `tcp:HOST:PORT`: H4 over TCP, as virtual and remote controllers serve it (Bumble's
/// `tcp-server:`, Android's Root-Canal).
///
/// The connect is bounded by `connectTimeout`; afterwards the socket is non-blocking with
/// TCP_NODELAY, since HCI commands are small and latency matters more than segment count.
public final class TCPTransport: DescriptorTransport {
    public let host: String
    public let port: UInt16
    public var connectTimeout: Duration

    public init(host: String, port: UInt16, connectTimeout: Duration = .seconds(5)) {
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        super.init(kind: .socket)
    }

    public override var name: String { TransportSpec.tcp(host: host, port: port).description }

    override func openDescriptor() throws(TransportError) -> Int32 {
        try TCPSocket.connect(host: host, port: port, timeout: connectTimeout)
    }
}
