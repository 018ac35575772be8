import EventLoop
import HCI

/// Connects an open transport to the event loop: received packets, failures and the end of
/// a replay become callbacks, and output that did not fit goes out when the descriptor is
/// writable again.
///
/// Transports with a descriptor are read when it is readable; one without (btsnoop replay)
/// is a pending source, read on every turn while it has input. A `CapturingTransport` also
/// gets its capture flushed every `captureFlushInterval`, so the file on disk is never more
/// than that behind even when the radio is quiet.
public final class TransportDriver {
    public let transport: any HCITransport
    private let loop: EventLoop
    private let onPackets: ([HCIPacket]) -> Void
    private let onFailure: (TransportError) -> Void
    private let onExhausted: () -> Void
    private var registration: EventLoop.Registration?
    private var waitingForWritable = false
    private var captureFlushTimer: EventLoop.TimerHandle?
    public var captureFlushInterval: Duration = .seconds(1)
    /// After a read that delivered advertising reports and nothing else, the descriptor
    /// is not polled for this long, so what arrives meanwhile is read in one go: a
    /// controller sends every advertising report as a packet of its own, and each wake-up
    /// (poll, read, a context switch, caches refilled) costs many times what the report
    /// does. A read with anything else in it (a command's completion, ACL data, a
    /// connection event) is a conversation under way: reading goes on at once. Zero
    /// reads whenever anything arrives.
    public var readCoalescing: Duration = .zero
    private var resumeReadingTimer: EventLoop.TimerHandle?
    /// After anything is sent, reading is not paused for this long: an answer is awaited
    /// (a command's completion, a peer's ATT response), and at a busy door the read
    /// before it would otherwise hold it back for a whole `readCoalescing`.
    public var answerWait: Duration = .milliseconds(250)
    private var lastSentAt: Instant?
    /// Input is being let gather (see `readCoalescing`).
    public var isReadingPaused: Bool { resumeReadingTimer != nil }

    public init(
        transport: any HCITransport,
        loop: EventLoop,
        onPackets: @escaping ([HCIPacket]) -> Void,
        onFailure: @escaping (TransportError) -> Void,
        onExhausted: @escaping () -> Void = {}
    ) {
        self.transport = transport
        self.loop = loop
        self.onPackets = onPackets
        self.onFailure = onFailure
        self.onExhausted = onExhausted
    }

    deinit { stop() }

    public var isStarted: Bool { registration != nil }

    /// Starts delivering; the transport must be open. After the transport is reopened
    /// (reconnect, controller recovery) call `stop()` and `start()` again: the descriptor
    /// may have changed.
    public func start() {
        guard registration == nil else { return }
        if let fd = transport.fileDescriptor {
            registration = loop.register(fileDescriptor: fd) { [weak self] in self?.readable() }
        } else {
            let transport = transport
            registration = loop.registerPendingSource(hasWork: { transport.hasPendingInput }) { [weak self] in
                self?.readable()
            }
        }
        if transport is CapturingTransport { scheduleCaptureFlush() }
    }

    private func scheduleCaptureFlush() {
        captureFlushTimer = loop.schedule(after: captureFlushInterval) { [weak self] in
            guard let self, let capturing = self.transport as? CapturingTransport else { return }
            capturing.flushCapture()
            self.scheduleCaptureFlush()
        }
    }

    /// Stops delivering; does not close the transport.
    public func stop() {
        if let registration { loop.unregister(registration) }
        registration = nil
        waitingForWritable = false
        if let captureFlushTimer { loop.cancel(captureFlushTimer) }
        captureFlushTimer = nil
        if let resumeReadingTimer { loop.cancel(resumeReadingTimer) }
        resumeReadingTimer = nil
    }

    /// Sends through the transport, and waits for writability if it had to queue.
    public func send(_ packet: HCIPacket) throws(TransportError) {
        try transport.send(packet)
        armWritableIfNeeded()
        guard readCoalescing > .zero else { return }
        lastSentAt = loop.now
        if resumeReadingTimer != nil { resumeReading() }
    }

    private func readable() {
        do {
            let packets = try transport.receive()
            if !packets.isEmpty { onPackets(packets) }
            if transport.isExhausted, registration != nil {
                stop()
                onExhausted()
                return
            }
            // Reports alone may wait; a receive cut short by its read limit may not (more is
            // queued in the kernel, and gathering then would cap the door's rate).
            if !packets.isEmpty, !transport.stoppedAtReadLimit, packets.allSatisfy(\.isAdvertisingReport) { pauseReading() }
        } catch {
            fail(error)
        }
    }

    private func pauseReading() {
        guard readCoalescing > .zero, transport.fileDescriptor != nil, resumeReadingTimer == nil, let registration else { return }
        if let lastSentAt, loop.now - lastSentAt < answerWait { return }
        loop.setReadingPaused(registration, true)
        resumeReadingTimer = loop.schedule(after: readCoalescing) { [weak self] in
            guard let self else { return }
            self.resumeReadingTimer = nil
            guard let registration = self.registration else { return }
            self.loop.setReadingPaused(registration, false)
            // Read now rather than poll first: at a busy door input is waiting, and the
            // poll would only say so (one system call per wake-up saved). Nothing there
            // reads as no packets, and the descriptor is polled as usual.
            self.readable()
        }
    }

    /// Ends a pause early: something was sent, its answer should not wait.
    private func resumeReading() {
        if let resumeReadingTimer { loop.cancel(resumeReadingTimer) }
        resumeReadingTimer = nil
        if let registration { loop.setReadingPaused(registration, false) }
    }

    private func armWritableIfNeeded() {
        guard transport.hasPendingOutput, !waitingForWritable, let registration else { return }
        waitingForWritable = true
        loop.setWritableCallback(registration) { [weak self] in self?.writable() }
    }

    private func writable() {
        do {
            try transport.flush()
        } catch {
            fail(error)
            return
        }
        if !transport.hasPendingOutput, let registration {
            waitingForWritable = false
            loop.setWritableCallback(registration, nil)
        }
    }

    private func fail(_ error: TransportError) {
        stop()
        onFailure(error)
    }
}

extension HCIPacket {
    /// An LE (Extended) Advertising Report event: traffic that may wait a little.
    var isAdvertisingReport: Bool {
        guard type == .event, payload.count >= 3, EventCode(rawValue: payload[0]) == .leMeta else { return false }
        let subevent = LESubeventCode(rawValue: payload[2])
        return subevent == .advertisingReport || subevent == .extendedAdvertisingReport
    }
}
