import HCI

/// A way to reach a Bluetooth controller: it carries H4-framed HCI packets both ways.
///
/// Every transport is non-blocking once open and is driven by the event loop: when
/// `fileDescriptor` is readable (or, for a transport without one, while `hasPendingInput`),
/// call `receive()`. `TransportDriver` does exactly that. Not thread-safe: use it on the
/// loop's thread.
public protocol HCITransport: AnyObject {
    /// How it was named in the configuration, for logs: `hci0`, `tcp:127.0.0.1:9000`.
    var name: String { get }
    var isOpen: Bool { get }

    /// Connects to the controller. Opening an open transport is an error-free no-op.
    func open() throws(TransportError)
    /// Gives the controller back (for `hciN`, the kernel takes it over again). Never
    /// blocks: what takes long (`hciN`) finishes in the background.
    func close()
    /// Blocks until what `close()` left under way has finished, or `timeout` passed;
    /// `false` in that case. For process exit, after the loop has stopped, so the
    /// controller is really given back before the process goes.
    func waitUntilClosed(timeout: Duration) -> Bool

    /// The descriptor to wait on for readability; `nil` for a transport without one
    /// (btsnoop replay), which is polled through `hasPendingInput` instead.
    var fileDescriptor: Int32? { get }
    /// `true` while `receive()` would return packets without waiting for a descriptor.
    var hasPendingInput: Bool { get }

    /// The packets that are available now (possibly none); never blocks.
    ///
    /// Bytes that cannot be framed are skipped and counted in `framingErrors`; throws only
    /// when the connection itself failed (`.closed`, `.io`).
    func receive() throws(TransportError) -> [HCIPacket]

    /// Like `receive()`, but offers the packets first, in order, to `take`, read in place
    /// from the transport's own buffer (valid only during the call): those it takes are
    /// handled and gone; from the first it declines on, the packets are returned as
    /// `receive()` returns them. Transports without such a buffer offer none.
    func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket])

    /// Queues the packet and writes as much as the controller takes now. Whatever it did not
    /// take stays queued (`hasPendingOutput`) and goes out with the next `send` or `flush`.
    func send(_ packet: HCIPacket) throws(TransportError)
    var hasPendingOutput: Bool { get }
    /// Writes queued output; call when the descriptor is writable again.
    func flush() throws(TransportError)

    /// Bytes or packets the framer had to skip since `open()`.
    var framingErrors: Int { get }
    /// `true` when the transport has nothing more to give, ever (a replay that ended).
    var isExhausted: Bool { get }
    /// When the packets of the last `receive()` were first received, in microseconds since
    /// the Unix epoch: a replay's recorded time. `nil` for live transports, whose packets
    /// arrive now.
    var recordedTimeMicroseconds: Int64? { get }
    /// `true` when the last `receive()` stopped at its read limit with input still
    /// waiting: a reader that lets input gather must read again at once, or a door busier
    /// than the limit per gathering window falls behind and the kernel drops reports.
    var stoppedAtReadLimit: Bool { get }
    /// During `receive(offering:)`: how long before that receive the packet being offered
    /// arrived, when the transport knows (the user channel's kernel stamps); `.zero`
    /// otherwise, the packet counting as arrived when it was read.
    var offeredPacketAge: Duration { get }
}

extension HCITransport {
    public var recordedTimeMicroseconds: Int64? { nil }
    public var stoppedAtReadLimit: Bool { false }
    public var offeredPacketAge: Duration { .zero }

    public func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket]) {
        (0, try receive())
    }
}

extension HCITransport {
    /// Most transports close at once: nothing is ever left to wait for.
    public func waitUntilClosed(timeout: Duration) -> Bool { true }
}
