import HCI

/// `hciN`: the kernel's adapter N with the Bluetooth stack of the kernel and bluetoothd out
/// of the way (HCI_CHANNEL_USER): this process is the only host of that controller.
///
/// Opening brings the adapter down and binds the user channel; closing hands the adapter
/// back to the kernel. The socket delivers one whole packet per read, type byte first; it
/// still goes through the H4 framer so every transport shares one code path.
public final class UserChannelTransport: HCITransport {
    public let index: Int
    /// How often to retry a bind refused with EBUSY right after HCIDEVDOWN, while the
    /// kernel finishes taking the adapter down.
    public var busyRetries = 10
    public var busyRetryDelay: Duration = .milliseconds(100)
    private let stream = DescriptorStream(kind: .socket)

    public init(index: Int) {
        self.index = index
    }

    public var name: String { "hci\(index)" }
    public var isOpen: Bool { stream.isOpen }
    public var fileDescriptor: Int32? { stream.isOpen ? stream.fileDescriptor : nil }
    public var hasPendingInput: Bool { false }
    public var hasPendingOutput: Bool { stream.hasPendingOutput }
    public var framingErrors: Int { stream.framingErrors }
    public var isExhausted: Bool { false }

    public func open() throws(TransportError) {
        guard !stream.isOpen else { return }
        let socket = try UserChannelSocket.open(index: index, busyRetries: busyRetries, retryDelay: busyRetryDelay)
        stream.attach(socket)
    }

    public func close() { stream.close() }
    public func receive() throws(TransportError) -> [HCIPacket] { try stream.receive() }
    public func send(_ packet: HCIPacket) throws(TransportError) { try stream.send(packet) }
    public func flush() throws(TransportError) { try stream.flush() }
}
