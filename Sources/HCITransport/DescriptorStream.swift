#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import CBluetooth
import HCI

/// The non-blocking descriptor I/O shared by the `hciN`, `tcp:` and `serial:` transports:
/// reads through one `H4Framer`, and a bounded queue of outgoing packets.
///
/// Packets are written one write(2) per packet because the user-channel socket takes each
/// write as exactly one packet; on stream descriptors a partial write continues where it
/// stopped.
final class DescriptorStream {
    enum Kind {
        /// A byte stream (TCP): send(2) with MSG_NOSIGNAL, so a peer that went away is an
        /// error, not SIGPIPE.
        case socket
        /// One packet per read and write (the HCI user channel); sent like `socket`.
        case packetSocket
        /// write(2): ttys are not sockets.
        case device
    }

    static let readBufferSize = 64 * 1024
    /// Enough for hundreds of commands; reaching it means the controller stopped reading.
    static let maximumQueuedBytes = 64 * 1024
    /// Reads per `receive()`, so a flooding controller cannot starve the rest of the loop.
    /// A packet socket gives one packet per read, and the driver may let input gather for
    /// a while between receives (`TransportDriver.readGathering`); a receive that stops
    /// here says so (`stoppedAtReadLimit`) and the driver reads again without gathering,
    /// so the limit spreads a flood over loop turns and never caps the door's rate.
    static let maximumReadsPerReceive = 256
    /// `maximumReadsPerReceive`, smaller in tests (a test socket cannot queue 256 packets).
    let readLimit: Int
    /// Whether the last `receive()` stopped at `readLimit` (input may wait).
    private(set) var stoppedAtReadLimit = false

    let kind: Kind
    /// Gives a descriptor back: close(2), or a hand-over to a `BackgroundCloser` where
    /// close(2) can block (hciN).
    private let closeDescriptor: (Int32) -> Void
    private(set) var fileDescriptor: Int32 = -1
    private var framer = H4Framer()
    private(set) var framingErrors = 0
    private var readBuffer: [UInt8]
    private var outgoing: [[UInt8]] = []
    private var outgoingOffset = 0
    private var queuedBytes = 0
    private var peerClosed = false
    /// While packets are offered in place the framer's buffer is lent out: a close or a
    /// reopen from inside an offer (a callback that restarts the transport) leaves the
    /// framer alone, and the offering stops when `generation` moves on.
    private var isOffering = false
    private var generation = 0
    /// A packet socket's kernel stamps, for what the framer holds (`ArrivalMarks`).
    private var arrivals = ArrivalMarks()
    /// CLOCK_REALTIME at the end of the last receive's reads, in microseconds.
    private var receivedAtMicroseconds: Int64 = 0
    /// How long before the end of the receive's reads the packet being offered arrived,
    /// by its kernel stamp; `.zero` when it has none (streams: they arrive as read).
    private(set) var offeredPacketAge: Duration = .zero
    /// A stamp further back than this is not believed (the wall clock stepped between the
    /// arrival and the read): gathering holds reports for a second at most.
    static let longestBelievedAge: Duration = .seconds(5)

    init(kind: Kind, readLimit: Int = DescriptorStream.maximumReadsPerReceive,
         closeDescriptor: @escaping (Int32) -> Void = DescriptorStream.closeAtOnce) {
        self.kind = kind
        self.readLimit = readLimit
        self.closeDescriptor = closeDescriptor
        readBuffer = [UInt8](repeating: 0, count: Self.readBufferSize)
    }

    deinit { close() }

    /// close(2) on the caller's thread: quick for sockets and ttys that are not hciN.
    /// Asks the kernel to stamp each packet of a packet socket as it arrives (the user
    /// channel's SO_TIMESTAMP); `false` when refused: its packets then count as read.
    @discardableResult
    static func stampArrivals(_ fileDescriptor: Int32) -> Bool {
        cbt_enable_timestamps(fileDescriptor) == 0
    }

    static func closeAtOnce(_ fileDescriptor: Int32) {
        _ = Glibc.close(fileDescriptor)
    }

    var isOpen: Bool { fileDescriptor >= 0 }
    var hasPendingOutput: Bool { !outgoing.isEmpty }

    func attach(_ fileDescriptor: Int32) {
        close()
        self.fileDescriptor = fileDescriptor
        if !isOffering { resetFramer() }
        framingErrors = 0
        peerClosed = false
    }

    func close() {
        if fileDescriptor >= 0 { closeDescriptor(fileDescriptor) }
        fileDescriptor = -1
        outgoing.removeAll()
        outgoingOffset = 0
        queuedBytes = 0
        generation += 1
        if !isOffering { resetFramer() }
    }

    private func resetFramer() {
        framer.reset()
        arrivals.reset()
        offeredPacketAge = .zero
    }

    func receive() throws(TransportError) -> [HCIPacket] {
        try readAvailable()
        let packets = drainFramer()
        if packets.isEmpty && peerClosed { throw .closed }
        return packets
    }

    /// `receive()`, with the packets offered in place first (see `HCITransport`).
    func receive(
        offering take: (HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool
    ) throws(TransportError) -> (taken: Int, rest: [HCIPacket]) {
        try readAvailable()
        var taken = 0
        let offeredGeneration = generation
        isOffering = true
        offering: while generation == offeredGeneration {
            let held = framer.bufferedByteCount
            offeredPacketAge = age(ofStamp: arrivals.frontStamp)
            defer { arrivals.consume(held - framer.bufferedByteCount) }
            do {
                switch try framer.offerNextPacket(to: take) {
                case .taken: taken += 1
                case .declined, .needMoreBytes: break offering
                }
            } catch {
                framingErrors += 1
            }
        }
        isOffering = false
        offeredPacketAge = .zero
        guard generation == offeredGeneration else {
            // Closed or reopened meanwhile: what is left belonged to the old connection.
            resetFramer()
            return (taken, [])
        }
        let rest = drainFramer()
        if taken == 0 && rest.isEmpty && peerClosed { throw .closed }
        return (taken, rest)
    }

    /// Reads what the descriptor has into the framer, up to `readLimit` reads.
    private func readAvailable() throws(TransportError) {
        guard isOpen else { throw .notOpen }
        if peerClosed { throw .closed }
        var reads = 0
        stoppedAtReadLimit = false
        defer { stoppedAtReadLimit = reads >= readLimit }
        defer { if kind == .packetSocket { receivedAtMicroseconds = CapturingTransport.realtimeMicroseconds() } }
        readLoop: while reads < readLimit {
            var stamp: Int64 = 0
            let count = SystemCall.retryingInterrupts {
                readBuffer.withUnsafeMutableBytes { buffer in
                    kind == .packetSocket
                        ? cbt_receive_stamped(fileDescriptor, buffer.baseAddress, UInt(buffer.count), &stamp)
                        : read(fileDescriptor, buffer.baseAddress, buffer.count)
                }
            }
            if count > 0 {
                reads += 1
                framer.append(readBuffer[0 ..< count])
                if kind == .packetSocket { arrivals.read(byteCount: count, stampMicroseconds: stamp) }
                // A stream that filled less than the buffer had nothing more just then: the
                // read that would only say EAGAIN is saved (one system call per wake-up).
                if kind != .packetSocket, count < readBuffer.count { break }
                continue
            }
            if count == 0 {
                // Deliver what arrived before the end; the next call reports it.
                peerClosed = true
                break
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK: break readLoop
            // A tty whose other side went away (USB unplugged, pty closed) says EIO.
            // A user-channel socket whose adapter was unregistered says EPIPE.
            case ECONNRESET, EPIPE, ENETDOWN, EIO, ENODEV, ENXIO: peerClosed = true; break readLoop
            case let error: throw .io(call: "read", errno: error)
            }
        }
    }

    /// The packets left after what was offered in place: at a busy door a few answers
    /// and events, so each is allocated.
    private func drainFramer() -> [HCIPacket] {
        var packets: [HCIPacket] = []
        while true {
            let held = framer.bufferedByteCount
            defer { arrivals.consume(held - framer.bufferedByteCount) }
            do {
                guard let packet = try framer.nextPacket() else { return packets }
                packets.append(packet)
            } catch {
                framingErrors += 1
            }
        }
    }

    /// How long before the end of the reads a stamped packet arrived, within what is
    /// believed.
    private func age(ofStamp stamp: Int64?) -> Duration {
        guard let stamp, receivedAtMicroseconds > stamp else { return .zero }
        let age = Duration.microseconds(receivedAtMicroseconds - stamp)
        return age <= Self.longestBelievedAge ? age : .zero
    }


    func send(_ packet: HCIPacket) throws(TransportError) {
        guard isOpen else { throw .notOpen }
        let bytes = packet.h4Bytes
        if queuedBytes + bytes.count > Self.maximumQueuedBytes {
            // Try to make room before refusing.
            try flush()
            guard queuedBytes + bytes.count <= Self.maximumQueuedBytes else { throw .sendQueueFull(bytes: queuedBytes) }
        }
        outgoing.append(bytes)
        queuedBytes += bytes.count
        try flush()
    }

    func flush() throws(TransportError) {
        guard isOpen else { throw .notOpen }
        while let first = outgoing.first {
            let remaining = first.count - outgoingOffset
            let written = SystemCall.retryingInterrupts {
                first.withUnsafeBytes { buffer in
                    let start = buffer.baseAddress.map { $0 + outgoingOffset }
                    return switch kind {
                    case .socket, .packetSocket: Glibc.send(fileDescriptor, start, remaining, Int32(MSG_NOSIGNAL))
                    case .device: write(fileDescriptor, start, remaining)
                    }
                }
            }
            if written < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK, ENOBUFS: return
                case EPIPE, ECONNRESET, EIO, ENODEV, ENXIO: throw .closed
                case let error: throw .io(call: kind == .socket ? "send" : "write", errno: error)
                }
            }
            // Nothing taken without an error: try again when the descriptor is writable.
            if written == 0 { return }
            outgoingOffset += written
            queuedBytes -= written
            if outgoingOffset >= first.count {
                outgoing.removeFirst()
                outgoingOffset = 0
            }
        }
    }
}
