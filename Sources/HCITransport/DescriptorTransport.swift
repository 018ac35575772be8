import HCI

/// What the transports over one file descriptor (`hciN`, `tcp:`, `serial:`) share: all
/// but how the descriptor is opened and what the transport is called. Each subclass
/// overrides `name` and `openDescriptor()`.
public class DescriptorTransport: HCITransport {
    let stream: DescriptorStream

    /// - Parameter closeDescriptor: how a descriptor is given back (see `DescriptorStream`).
    init(kind: DescriptorStream.Kind, closeDescriptor: @escaping (Int32) -> Void = DescriptorStream.closeAtOnce) {
        stream = DescriptorStream(kind: kind, closeDescriptor: closeDescriptor)
    }

    public var name: String { preconditionFailure("each transport names itself") }

    /// Opens the descriptor; `open()` calls it only while closed.
    func openDescriptor() throws(TransportError) -> Int32 {
        preconditionFailure("each transport opens its own descriptor")
    }

    public var isOpen: Bool { stream.isOpen }
    public var fileDescriptor: Int32? { stream.isOpen ? stream.fileDescriptor : nil }
    public var hasPendingInput: Bool { false }
    public var hasPendingOutput: Bool { stream.hasPendingOutput }
    public var framingErrors: Int { stream.framingErrors }
    public var isExhausted: Bool { false }
    public var stoppedAtReadLimit: Bool { stream.stoppedAtReadLimit }
    public var offeredPacketAge: Duration { stream.offeredPacketAge }

    public func open() throws(TransportError) {
        guard !stream.isOpen else { return }
        stream.attach(try openDescriptor())
    }

    public func close() { stream.close() }
    /// Nothing to wait for unless the subclass closes in the background.
    public func waitUntilClosed(timeout: Duration) -> Bool { true }
    public func receive() throws(TransportError) -> [HCIPacket] { try stream.receive() }
    public func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket]) {
        try stream.receive(offering: take)
    }
    public func send(_ packet: HCIPacket) throws(TransportError) { try stream.send(packet) }
    public func flush() throws(TransportError) { try stream.flush() }
}
