import HCI

/// `hciN`: the kernel's adapter N with the Bluetooth stack of the kernel and bluetoothd out
/// of the way (HCI_CHANNEL_USER): this process is the only host of that controller.
///
/// Opening brings the adapter down and binds the user channel; closing hands the adapter
/// back to the kernel. The socket delivers one whole packet per read, type byte first; it
/// still goes through the H4 framer so every transport shares one code path.
public final class UserChannelTransport: DescriptorTransport {
    public let index: Int
    /// How often to retry a bind refused with EBUSY right after HCIDEVDOWN, while the
    /// kernel finishes taking the adapter down.
    public var busyRetries = 10
    public var busyRetryDelay: Duration = .milliseconds(100)

    public init(index: Int) {
        self.index = index
        super.init(kind: .socket)
    }

    public override var name: String { "hci\(index)" }

    override func openDescriptor() throws(TransportError) -> Int32 {
        try UserChannelSocket.open(index: index, busyRetries: busyRetries, retryDelay: busyRetryDelay)
    }
}
