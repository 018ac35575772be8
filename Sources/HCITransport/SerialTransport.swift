import HCI

/// `serial:PATH@BAUD`: H4 over a UART, e.g. an nRF52840 dongle with an HCI UART firmware.
///
/// Raw mode, 8N1, RTS/CTS hardware flow control (H4 has no other way to stop a sender, so a
/// port that cannot do it is refused unless `flowControl` is turned off).
public final class SerialTransport: DescriptorTransport {
    public let path: String
    public let baud: Int
    /// RTS/CTS; only worth turning off for a port that has no flow-control lines at all.
    public var flowControl = true

    /// Throws `.unsupportedBaudRate` unless `baud` is one of `SerialBaudRate.supported`.
    public init(path: String, baud: Int = SerialBaudRate.default) throws(TransportError) {
        guard SerialBaudRate.speed(for: baud) != nil else { throw .unsupportedBaudRate(baud) }
        self.path = path
        self.baud = baud
        super.init(kind: .device)
    }

    public override var name: String { TransportSpec.serial(path: path, baud: baud).description }

    override func openDescriptor() throws(TransportError) -> Int32 {
        try SerialPort.open(path: path, baud: baud, flowControl: flowControl)
    }
}
