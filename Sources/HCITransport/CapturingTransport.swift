#if canImport(Glibc)
import Glibc
#endif
import HCI

/// `--capture FILE`: wraps any transport and writes every packet, both directions, to a
/// btsnoop file with wall-clock timestamps (created mode 0600, never through a symbolic
/// link), the key octets zeroed (`CaptureRedaction`) unless `keepsKeys` (`--capture-keys`).
///
/// A capture is a diagnostic: if writing it fails (disk full), capturing stops and the
/// error is kept in `captureError`, but the gateway keeps talking to its controller.
public final class CapturingTransport: HCITransport {
    public let inner: any HCITransport
    public let path: String
    /// Pairing keys and LTKs written as they are (`--capture-keys`); zeroed otherwise.
    public let keepsKeys: Bool
    private var writer: BTSnoopWriter?
    private let timestampMicroseconds: () -> Int64
    /// Why capturing stopped, if it did.
    public private(set) var captureError: TransportError?

    /// - Parameter timestampMicroseconds: wall-clock time of a record; the system's
    ///   CLOCK_REALTIME unless a test pins it.
    public init(
        wrapping inner: any HCITransport,
        path: String,
        keepsKeys: Bool = false,
        timestampMicroseconds: @escaping () -> Int64 = CapturingTransport.realtimeMicroseconds
    ) {
        self.inner = inner
        self.path = path
        self.keepsKeys = keepsKeys
        self.timestampMicroseconds = timestampMicroseconds
    }

    public static func realtimeMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    public var name: String { inner.name }
    public var isOpen: Bool { inner.isOpen }
    public var fileDescriptor: Int32? { inner.fileDescriptor }
    public var hasPendingInput: Bool { inner.hasPendingInput }
    public var hasPendingOutput: Bool { inner.hasPendingOutput }
    public var framingErrors: Int { inner.framingErrors }
    public var isExhausted: Bool { inner.isExhausted }
    public var recordedTimeMicroseconds: Int64? { inner.recordedTimeMicroseconds }
    public var stoppedAtReadLimit: Bool { inner.stoppedAtReadLimit }
    public var offeredPacketAge: Duration { inner.offeredPacketAge }
    /// Records written to the capture so far.
    public var capturedRecordCount: Int { writer?.recordCount ?? 0 }

    /// Opens the capture file (truncating it), then the transport. A capture that cannot be
    /// created is an error here, before anything runs.
    public func open() throws(TransportError) {
        guard !inner.isOpen else { return }
        if writer == nil {
            writer = try BTSnoopWriter(path: path)
            captureError = nil
        }
        try inner.open()
    }

    /// Closes the transport and flushes and closes the capture.
    public func close() {
        inner.close()
        do {
            try writer?.close()
        } catch {
            captureError = error
        }
        writer = nil
    }

    public func waitUntilClosed(timeout: Duration) -> Bool {
        inner.waitUntilClosed(timeout: timeout)
    }

    public func receive() throws(TransportError) -> [HCIPacket] {
        let packets = try inner.receive()
        for packet in packets { record(packet, .controllerToHost) }
        return packets
    }

    /// Packets taken in place are recorded from their bytes (a capture is a debugging aid:
    /// the copy it makes is its own cost), at the time they arrived where the transport
    /// knows it, so a replay decides on the times the live run did.
    public func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket]) {
        let received = try inner.receive { type, payload in
            guard take(type, payload) else { return false }
            record(HCIPacket(type: type, payload: Array(payload)), .controllerToHost, age: inner.offeredPacketAge)
            return true
        }
        for packet in received.rest { record(packet, .controllerToHost) }
        return received
    }

    /// Records the packet once the transport accepted it (queued counts as accepted).
    public func send(_ packet: HCIPacket) throws(TransportError) {
        try inner.send(packet)
        record(packet, .hostToController)
    }

    public func flush() throws(TransportError) {
        try inner.flush()
    }

    /// Pushes buffered records to the file; for a periodic timer, so an idle capture is
    /// still complete on disk.
    public func flushCapture() {
        do {
            try writer?.flush()
        } catch {
            stopCapturing(error)
        }
    }

    private func record(_ packet: HCIPacket, _ direction: BTSnoop.Direction, age: Duration = .zero) {
        guard let writer else { return }
        let (seconds, attoseconds) = age.components
        let ageMicroseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        do {
            try writer.write(BTSnoop.Record(direction: direction, packet: keepsKeys ? packet : CaptureRedaction.redacted(packet),
                                            timestampMicroseconds: timestampMicroseconds() - ageMicroseconds))
        } catch {
            stopCapturing(error)
        }
    }

    private func stopCapturing(_ error: TransportError) {
        captureError = error
        try? writer?.close()
        writer = nil
    }
}
