import HCI

/// `serial:PATH@BAUD`: H4 over a UART, e.g. an nRF52840 dongle with an HCI UART firmware.
///
/// Raw mode, 8N1, RTS/CTS hardware flow control (H4 has no other way to stop a sender, so a
/// port that cannot do it is refused unless `flowControl` is turned off).
public final class SerialTransport: HCITransport {
    public let path: String
    public let baud: Int
    /// RTS/CTS; only worth turning off for a port that has no flow-control lines at all.
    public var flowControl = true
    private let stream = DescriptorStream(kind: .device)

    /// Throws `.unsupportedBaudRate` unless `baud` is one of `SerialBaudRate.supported`.
    public init(path: String, baud: Int = SerialBaudRate.default) throws(TransportError) {
        guard SerialBaudRate.speed(for: baud) != nil else { throw .unsupportedBaudRate(baud) }
        self.path = path
        self.baud = baud
    }

    public var name: String { TransportSpec.serial(path: path, baud: baud).description }
    public var isOpen: Bool { stream.isOpen }
    public var fileDescriptor: Int32? { stream.isOpen ? stream.fileDescriptor : nil }
    public var hasPendingInput: Bool { false }
    public var hasPendingOutput: Bool { stream.hasPendingOutput }
    public var framingErrors: Int { stream.framingErrors }
    public var isExhausted: Bool { false }

    public func open() throws(TransportError) {
        guard !stream.isOpen else { return }
        stream.attach(try SerialPort.open(path: path, baud: baud, flowControl: flowControl))
    }

    public func close() { stream.close() }
    public func receive() throws(TransportError) -> [HCIPacket] { try stream.receive() }
    public func send(_ packet: HCIPacket) throws(TransportError) { try stream.send(packet) }
    public func flush() throws(TransportError) { try stream.flush() }
}
