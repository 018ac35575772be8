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
    /// is not polled for a while, so what arrives meanwhile is read in one go: a
    /// controller sends every advertising report as a packet of its own, and each wake-up
    /// costs many times what the report does. How long is `ReadGathering`'s decision, from
    /// the rate reports arrive at. A read with anything else in it (a command's
    /// completion, ACL data, a connection event) is a conversation under way: reading goes
    /// on at once. `nil` reads whenever anything arrives.
    public var readGathering: ReadGathering?
    /// When set, each packet read is offered here first, read in place from the
    /// transport's buffer (valid only during the call), in order; `true` takes it. From the
    /// first one declined on, packets go to `onPackets`, which is called after every read
    /// that received anything, with an empty list when all were taken. For advertising
    /// reports: the packets of a busy door, framed and handled without a copy or an
    /// allocation, on bytes the read has just brought into cache.
    public var offerInPlace: ((HCIPacketType, UnsafeBufferPointer<UInt8>) -> Bool)?
    private var resumeReadingTimer: EventLoop.TimerHandle?
    /// Commands sent whose Command Complete or Command Status has not been read yet: while
    /// any is awaited reading is not paused (the host sends its next command only after the
    /// answer). Never awaited longer than `answerWait`, in case one goes unanswered.
    private var commandsAwaitingAnswer = 0
    private var lastCommandSentAt: Instant?
    /// After ACL data is sent, reading is not paused for this long: a peer's ATT response
    /// comes a connection event or more later, and at a busy door the read before it would
    /// otherwise hold it back for a whole pause.
    public var answerWait: Duration = .milliseconds(250)
    private var lastDataSentAt: Instant?
    /// Input is being let gather (see `readGathering`).
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
        guard readGathering != nil else { return }
        if packet.type == .command {
            commandsAwaitingAnswer += 1
            lastCommandSentAt = loop.now
        } else {
            lastDataSentAt = loop.now
        }
        if resumeReadingTimer != nil { resumeReading() }
    }

    private func readable() {
        do {
            let (received, reportsOnly) = try deliverReceived()
            if transport.isExhausted, registration != nil {
                stop()
                onExhausted()
                return
            }
            // Reports alone may wait; a receive cut short by its read limit may not (more is
            // queued in the kernel, and gathering then would cap the door's rate).
            if received, reportsOnly, !transport.stoppedAtReadLimit { pauseReading() }
        } catch {
            fail(error)
        }
    }

    /// Receives and hands the packets on: whether there were any, and whether they were all
    /// advertising reports.
    private func deliverReceived() throws(TransportError) -> (received: Bool, reportsOnly: Bool) {
        var taken = 0
        var reportsTaken = 0
        let packets: [HCIPacket]
        if let offerInPlace {
            (taken, packets) = try transport.receive { type, payload in
                guard offerInPlace(type, payload) else { return false }
                if count(type, payload) { reportsTaken += 1 }
                return true
            }
        } else {
            packets = try transport.receive()
        }
        guard taken > 0 || !packets.isEmpty else { return (false, false) }
        let reports = reportsTaken + countReports(packets)
        readGathering?.read(advertisingReports: reports)
        onPackets(packets)
        return (true, reports == taken + packets.count)
    }

    /// Counts the advertising reports and the answers to commands awaited.
    private func countReports(_ packets: [HCIPacket]) -> Int {
        var reports = 0
        for packet in packets where packet.payload.withUnsafeBufferPointer({ count(packet.type, $0) }) {
            reports += 1
        }
        return reports
    }

    /// Whether the packet is an advertising report; an answer to a command awaited is
    /// counted off.
    private func count(_ type: HCIPacketType, _ payload: UnsafeBufferPointer<UInt8>) -> Bool {
        if HCIPacket.isAdvertisingReport(type: type, payload: payload) { return true }
        if commandsAwaitingAnswer > 0, HCIPacket.isCommandAnswer(type: type, payload: payload) { commandsAwaitingAnswer -= 1 }
        return false
    }

    private var isAnswerAwaited: Bool {
        let now = loop.now
        if commandsAwaitingAnswer > 0, let lastCommandSentAt {
            if now - lastCommandSentAt < answerWait { return true }
            commandsAwaitingAnswer = 0
        }
        if let lastDataSentAt, now - lastDataSentAt < answerWait { return true }
        return false
    }

    private func pauseReading() {
        guard readGathering != nil, transport.fileDescriptor != nil, resumeReadingTimer == nil, let registration else { return }
        if isAnswerAwaited { return }
        guard let pause = readGathering?.pause(at: loop.now) else { return }
        loop.setReadingPaused(registration, true)
        resumeReadingTimer = loop.schedule(after: pause) { [weak self] in
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

    /// Reads at once what waits (a decision is due that must see the reports that arrived
    /// before it); gathering then goes on as after any read. Also when reading does not
    /// pause: a loop held up (a slow disk sync, a starved CPU) finds the decision's timer
    /// and the waiting input due in the same turn, and the timers come first. With nothing
    /// waiting this is one receive that finds nothing.
    public func readWaitingInput() {
        guard registration != nil else { return }
        if resumeReadingTimer != nil { resumeReading() }
        readable()
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
        payload.withUnsafeBufferPointer { Self.isAdvertisingReport(type: type, payload: $0) }
    }

    static func isAdvertisingReport(type: HCIPacketType, payload: UnsafeBufferPointer<UInt8>) -> Bool {
        guard type == .event, payload.count >= 3, EventCode(rawValue: payload[0]) == .leMeta else { return false }
        let subevent = LESubeventCode(rawValue: payload[2])
        return subevent == .advertisingReport || subevent == .extendedAdvertisingReport
    }

    /// A Command Complete or Command Status answering a command (opcode 0 only returns
    /// command credits).
    static func isCommandAnswer(type: HCIPacketType, payload: UnsafeBufferPointer<UInt8>) -> Bool {
        guard type == .event, payload.count >= 2 else { return false }
        let opcodeAt: Int
        switch EventCode(rawValue: payload[0]) {
        case .commandComplete: opcodeAt = 3
        case .commandStatus: opcodeAt = 4
        default: return false
        }
        guard payload.count >= opcodeAt + 2 else { return false }
        return payload[opcodeAt] != 0 || payload[opcodeAt + 1] != 0
    }
}
