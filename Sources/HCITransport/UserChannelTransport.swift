import HCI

/// `hciN`: the kernel's adapter N with the Bluetooth stack of the kernel and bluetoothd out
/// of the way (HCI_CHANNEL_USER): this process is the only host of that controller.
///
/// Opening brings the adapter down and binds the user channel; closing hands the adapter
/// back to the kernel. The socket delivers one whole packet per read, type byte first; it
/// still goes through the H4 framer so every transport shares one code path.
///
/// Closing returns at once: the kernel answers close(2) by resetting the controller and
/// waiting for it (~2 s when it is dead), so a `BackgroundCloser` does the waiting. Until
/// that close has returned, `open()` throws `.adapterStillClosing`.
public final class UserChannelTransport: DescriptorTransport {
    public let index: Int
    /// How many opens in a row may meet a bind refused with EBUSY (right after HCIDEVDOWN
    /// the kernel may still be taking the adapter down) as `.adapterGoingDown`, which the
    /// caller retries shortly, before it is the lasting `.adapterManagedByKernel`.
    public var busyRetries = 10
    private var busyOpens = 0
    private let closer: BackgroundCloser
    private let openSocket: (Int) throws(TransportError) -> Int32

    public convenience init(index: Int) {
        self.init(index: index, closer: .shared)
    }

    /// - Parameter openSocket: `UserChannelSocket.open` unless a test stands in for the kernel.
    init(index: Int, closer: BackgroundCloser,
         openSocket: @escaping (Int) throws(TransportError) -> Int32 = { index throws(TransportError) in
             try UserChannelSocket.open(index: index)
         }) {
        self.index = index
        self.closer = closer
        self.openSocket = openSocket
        let adapter = Self.adapterName(index)
        super.init(kind: .packetSocket, closeDescriptor: { closer.close($0, key: adapter) })
    }

    public override var name: String { Self.adapterName(index) }

    private static func adapterName(_ index: Int) -> String { "hci\(index)" }

    override func openDescriptor() throws(TransportError) -> Int32 {
        // Binding while the last socket is still closing fails (EBUSY/EUSERS) and says
        // another program holds the adapter, which is not so.
        guard !closer.isClosing(name) else { throw .adapterStillClosing(index: index) }
        do {
            let descriptor = try openSocket(index)
            busyOpens = 0
            return descriptor
        } catch .adapterManagedByKernel where busyOpens < busyRetries {
            busyOpens += 1
            throw .adapterGoingDown(index: index)
        } catch {
            busyOpens = 0
            throw error
        }
    }

    public override func waitUntilClosed(timeout: Duration) -> Bool {
        closer.waitUntilClosed(name, timeout: timeout)
    }
}
