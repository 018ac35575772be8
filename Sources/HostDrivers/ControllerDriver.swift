import EventLoop
import HCI
import HCITransport
import JSONText
import Host

/// Drives the sans-IO `HostController` with a real transport on the event loop: opens and
/// reopens the transport, sends what the host asks, arms its timer, and hands
/// advertising reports and state changes up.
///
/// The host decides *when* (backoff, probes, timeouts); this class only does the I/O.
public final class ControllerDriver {
    public let loop: EventLoop
    public let transport: any HCITransport
    /// Exclusivity unchecked: the host is only mutated on the loop's thread, and no
    /// callback runs while it is (the dynamic check per packet showed in profiles).
    @exclusivity(unchecked) public private(set) var host: HostController

    /// Every advertising report, one at a time, with the time it arrived: read in place
    /// from its packet (no report value, no reference counting), or, for extended reports
    /// joined from fragments, from the joined report. The one way reports reach every
    /// command (`run`, `scan`, `calibrate`, `prove`). The view's data is valid only during
    /// the call: keep what is needed, not the view.
    public var onAdvertisingReport: (LEAdvertisingReportView, Instant) -> Void = { _, _ in }
    /// After the reports of one read (or of one host action) went to `onAdvertisingReport`:
    /// for work done once per batch of reports, not per report.
    public var onAdvertisingReportsEnd: (Instant) -> Void = { _ in }
    /// How long the transport lets advertising reports gather after a read of them
    /// (`TransportDriver`); `nil` reads whenever anything arrives.
    public var readGathering: ReadGathering?
    public var onLog: (HostLogEvent) -> Void = { _ in }
    /// Opening failed in a way retrying cannot fix (bad path, no permission, …).
    public var onFatalError: (TransportError) -> Void = { _ in }
    /// A replayed capture has ended.
    public var onExhausted: () -> Void = {}
    /// The host's state changes (scanning, recovering, …). One handler, the link owner's:
    /// it hands each change to the parties that follow it (the data path, the connect
    /// scheduler, the door beacon, …) in the order it writes (docs/architecture.md, "Who
    /// hears what, in which order").
    public var onStateChanged: (HostState) -> Void = { _ in }
    /// HCI events the host does not consume itself (connections, disconnections,
    /// completed packets, other LE subevents), for the data path and the connect
    /// scheduler, in the order the owner's handler writes.
    public var onEvent: (HCIEvent, Instant) -> Void = { _, _ in }
    /// ACL data from the controller, for the data path.
    public var onACLData: (HCIPacket, Instant) -> Void = { _, _ in }
    /// The last reason the transport could not be used, for the final message.
    public private(set) var lastTransportError: TransportError?
    /// For a replay, from its first replayed packet on: how recorded times map onto the
    /// loop's (reports are handed up at the time they were recorded).
    public private(set) var replayTimeline: ReplayTimeline?
    /// The time of the read whose packets are being taken in place (`takeInPlace`), until
    /// the rest of it reaches `received`.
    /// Exclusivity unchecked (as `host`'s, and the flags below that every packet reads):
    /// only the loop's thread touches them.
    @exclusivity(unchecked) private var inPlaceBatchTime: Instant?
    /// The process's CPU seconds when the replay's first recorded packet arrived.
    private var replayStartCPUSeconds: Double?

    /// How soon to try again when the transport is still closing from the last time.
    static let stillClosingRetry: Duration = .milliseconds(100)

    /// Errors after which reopening is pointless; everything else is retried with backoff.
    private let isPermanent: (TransportError) -> Bool

    private var driver: TransportDriver?
    private lazy var hostTimer = DeadlineTimer(loop: loop) { [unowned self] in self.feed(.timerFired) }
    private var reopenTimer: EventLoop.TimerHandle?
    private var actions: [HostAction] = []
    /// The completions of submitted commands that have not ended yet, by the token the
    /// host echoes back in `.commandFinished` (a counter of this link's: it only has to
    /// tell the commands apart).
    private var completions: [UInt64: CommandCompletion] = [:]
    private var lastCommandToken: UInt64 = 0
    @exclusivity(unchecked) private var pendingInputs: [HostInput] = []
    /// The reports of one event on the hot path, reused from event to event (empty
    /// between events).
    @exclusivity(unchecked) private var reportBuffer: [LEAdvertisingReport] = []
    @exclusivity(unchecked) private var isHandling = false
    @exclusivity(unchecked) private var stopped = false

    public init(loop: EventLoop, transport: any HCITransport, configuration: HostConfiguration,
         isPermanent: @escaping (TransportError) -> Bool) {
        self.loop = loop
        self.transport = transport
        self.host = HostController(configuration: configuration)
        self.isPermanent = isPermanent
        actions.reserveCapacity(16)
        reportBuffer.reserveCapacity(32)
    }

    public func start() {
        open()
    }

    /// A link let go without `stop()` leaves no read registered that could call into it.
    deinit {
        driver?.offerInPlace = nil
        driver?.stop()
    }

    /// Stops everything and gives the controller back (for `hciN`, to the kernel; that
    /// finishes in the background: see `waitUntilClosed(timeout:)`).
    public func stop() {
        stopped = true
        // The loop is ending: whoever waits for a command is going away with it.
        completions.removeAll()
        hostTimer.cancel()
        if let reopenTimer { _ = loop.cancel(reopenTimer) }
        reopenTimer = nil
        driver?.stop()
        driver = nil
        transport.close()
    }

    /// After `stop()`, at process exit: blocks until the transport's close has finished
    /// (the adapter is back with the kernel), or `timeout` passed; `false` then.
    public func waitUntilClosed(timeout: Duration) -> Bool {
        transport.waitUntilClosed(timeout: timeout)
    }

    /// How a submitted command ended: Command Complete (success or an error status in its
    /// return parameters), Command Status, no answer in time (`.timedOut`), dropped by a
    /// controller reset or a lost transport before it was answered (`.flushed`), or not
    /// taken at all (`.notSent`).
    public typealias CommandCompletion = (HostCommandResult.Outcome, Instant) -> Void

    /// Sends a command of a layer above (connections, accept list, advertising) through
    /// the host's command flow. `completion` is called exactly once, on the loop, with how
    /// it ended (possibly before this returns, when the host does not take it) — unless
    /// the link is stopped first: after `stop()` nothing is called back.
    ///
    /// With `recoverOnTimeout` false, no answer ends the command as `.timedOut` without
    /// resetting the controller (for commands some controllers silently ignore).
    public func submit<Command: HCICommand>(_ command: Command, recoverOnTimeout: Bool = true,
                                            completion: @escaping CommandCompletion) {
        submit(packet: command.packet, opcode: Command.opcode, recoverOnTimeout: recoverOnTimeout, completion: completion)
    }

    /// As `submit(_:recoverOnTimeout:completion:)` for an already encoded command packet.
    public func submit(packet: HCIPacket, opcode: Opcode, recoverOnTimeout: Bool = true,
                       completion: @escaping CommandCompletion) {
        let now = loop.now
        lastCommandToken &+= 1
        let token = lastCommandToken
        completions[token] = completion
        let actions = host.submit(packet: packet, opcode: opcode, token: token, now: now, recoverOnTimeout: recoverOnTimeout)
        for action in actions { perform(action, now: now) }
        armHostTimer()
    }

    /// Commands submitted whose completion has not been called yet.
    public var unfinishedCommandCount: Int { completions.count }

    /// Pauses or resumes scanning (see `HostController.setScanningPaused(_:now:)`): for
    /// controllers that cannot scan while initiating.
    public func setScanningPaused(_ paused: Bool) {
        let now = loop.now
        let actions = host.setScanningPaused(paused, now: now)
        for action in actions { perform(action, now: now) }
        armHostTimer()
    }

    /// Reads now what waits while reports are let gather: for a decision due at a time,
    /// which must first see the reports that arrived before it.
    public func readWaitingInput() {
        driver?.readWaitingInput()
    }

    /// Sends an ACL data packet as it is. Flow control (controller buffer credits) is the
    /// caller's: the data path counts credits before it calls this.
    public func sendACL(_ packet: HCIPacket) {
        guard let driver else { return }
        do {
            try driver.send(packet)
        } catch {
            transportFailed(error)
        }
    }

    // MARK: Transport

    private func open() {
        guard !stopped else { return }
        do {
            try transport.open()
        } catch .adapterStillClosing, .adapterGoingDown {
            // Our own last close is still under way (the kernel resets the controller
            // on close), or the kernel is still taking the adapter down: not a failure
            // of the controller, so no backoff step; look again shortly, so scanning
            // resumes as soon as the adapter is ready (the transport bounds the tries).
            scheduleOpen(after: Self.stillClosingRetry)
            return
        } catch {
            lastTransportError = error
            if isPermanent(error) {
                onFatalError(error)
                return
            }
            feed(.transportClosed(reason: error.message))
            return
        }
        let driver = TransportDriver(
            transport: transport, loop: loop,
            onPackets: { [unowned self] packets in self.received(packets) },
            onFailure: { [unowned self] error in self.transportFailed(error) },
            onExhausted: { [unowned self] in self.onExhausted() }
        )
        driver.readGathering = readGathering
        // Unretained, and used without a retain per packet (each an atomic retain and
        // release). The link must outlive every read of its driver: it owns the driver and
        // stops it (`closeTransport`, `stop`), and whoever owns the link (the agent, a
        // scan, a proof session) keeps it until the loop has stopped.
        let link = Unmanaged.passUnretained(self)
        driver.offerInPlace = { type, payload in link._withUnsafeGuaranteedRef { $0.takeInPlace(type, payload) } }
        self.driver = driver
        driver.start()
        feed(.transportOpened)
    }

    private func scheduleOpen(after wait: Duration) {
        if let reopenTimer { _ = loop.cancel(reopenTimer) }
        reopenTimer = loop.schedule(after: wait) { [unowned self] in
            self.reopenTimer = nil
            self.open()
        }
    }

    private func transportFailed(_ error: TransportError) {
        lastTransportError = error
        closeTransport()
        feed(.transportClosed(reason: error.message))
    }

    private func closeTransport() {
        driver?.stop()
        driver = nil
        transport.close()
        // A read that failed after reports were taken in place never reached `received`:
        // its batch still ends (what its reports decided must not wait for the next one),
        // and the next read gets its own time.
        if let batchTime = inPlaceBatchTime {
            inPlaceBatchTime = nil
            onAdvertisingReportsEnd(batchTime)
        }
    }

    /// The rest of a read, after what was taken in place: their reports share one time,
    /// `now` (or, for a replay, when they were recorded), and so does the batch's end.
    private func received(_ packets: [HCIPacket]) {
        let now = inPlaceBatchTime ?? timeOfReceivedPackets()
        inPlaceBatchTime = nil
        // Packets and payloads borrowed in place, the callback read once: every copy would
        // be an atomic retain and release per packet, and each one waits for the cache
        // misses of the reports before it.
        let onAdvertisingReport = self.onAdvertisingReport
        for index in packets.indices {
            if stopped { return }
            if !isHandling, pendingInputs.isEmpty {
                let delivered = packets[index].payload.withUnsafeBufferPointer { payload in
                    deliverInPlace(type: packets[index].type, payload: payload, now: now, to: onAdvertisingReport)
                }
                if delivered { continue }
            }
            feed(.packetReceived(packets[index]))
        }
        onAdvertisingReportsEnd(now)
    }

    /// A packet the transport offers in place, before the rest of its read reaches
    /// `received`: reports go up read from the transport's own buffer, each at the time it
    /// arrived. Anything else, or anything while the host is mid-input, is declined and
    /// comes as a packet, in order.
    private func takeInPlace(_ type: HCIPacketType, _ payload: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !stopped, !isHandling, pendingInputs.isEmpty else { return false }
        let readAt: Instant
        if let inPlaceBatchTime {
            readAt = inPlaceBatchTime
        } else {
            readAt = timeOfReceivedPackets()
            inPlaceBatchTime = readAt
        }
        // When it arrived, where the transport knows: reports let gather for up to a
        // second count from then (docs/presence.md, "The signal").
        let age = transport.offeredPacketAge
        let arrivedAt = age == .zero ? readAt : readAt - age
        return deliverInPlace(type: type, payload: payload, now: arrivedAt, to: onAdvertisingReport)
    }

    private func timeOfReceivedPackets() -> Instant {
        let now = loop.now
        guard let recorded = transport.recordedTimeMicroseconds else { return now }
        if replayTimeline == nil { replayStartCPUSeconds = ProcessCPUTime.seconds() }
        var timeline = replayTimeline ?? ReplayTimeline(origin: now, recordedMicroseconds: recorded)
        let instant = timeline.instant(forRecorded: recorded)
        replayTimeline = timeline
        return instant
    }

    /// Hands out the reports of an advertising report event, read in place when they need
    /// no reassembly; `false` for any other packet.
    private func deliverInPlace(
        type: HCIPacketType, payload: UnsafeBufferPointer<UInt8>, now: Instant,
        to onAdvertisingReport: (LEAdvertisingReportView, Instant) -> Void
    ) -> Bool {
        switch host.routeAdvertisingReports(type: type, payload: payload, into: &reportBuffer) {
        case .inPlace(let subevent):
            let parameters = UnsafeBufferPointer(rebasing: payload[AdvertisingReportRoute.parametersOffset...])
            LEAdvertisingReportView.forEach(subevent: subevent, parameters: parameters) { onAdvertisingReport($0, now) }
            return true
        case .buffered:
            deliver(reportBuffer, now: now)
            reportBuffer.removeAll(keepingCapacity: true)
            return true
        case .notReports:
            return false
        }
    }

    // MARK: Host

    private func feed(_ input: HostInput) {
        pendingInputs.append(input)
        guard !isHandling else { return }
        isHandling = true
        defer { isHandling = false }
        while !pendingInputs.isEmpty, !stopped {
            let next = pendingInputs.removeFirst()
            let now = loop.now
            actions.removeAll(keepingCapacity: true)
            host.handle(next, now: now, into: &actions)
            for action in actions { perform(action, now: now) }
        }
        armHostTimer()
    }

    private func perform(_ action: HostAction, now: Instant) {
        switch action {
        case .send(let packet):
            guard let driver else { return }
            do {
                try driver.send(packet)
            } catch {
                transportFailed(error)
            }
        case .closeTransport:
            closeTransport()
        case .reopenTransport(let wait):
            closeTransport()
            scheduleOpen(after: wait)
        case .advertisingReports(let reports):
            deliver(reports, now: now)
        case .stateChanged(let state):
            onStateChanged(state)
        case .log(let event):
            onLog(event)
        case .event(let event):
            onEvent(event, now)
        case .aclData(let packet):
            onACLData(packet, now)
        case .commandFinished(let result):
            completions.removeValue(forKey: result.token)?(result.outcome, now)
        }
    }

    private func deliver(_ reports: [LEAdvertisingReport], now: Instant) {
        for report in reports {
            LEAdvertisingReportView.withView(of: report) { onAdvertisingReport($0, now) }
        }
        if !reports.isEmpty { onAdvertisingReportsEnd(now) }
    }

    private func armHostTimer() {
        hostTimer.arm(at: stopped ? nil : host.nextDeadline)
    }
}

extension ControllerDriver {
    /// What a replay's packets cost from its first recorded packet on (bring-up and start-up
    /// not in it), for its closing line: `<n> packets, <t> s of CPU (<u> µs a packet)`.
    /// scripts/bench-door reads it as the floor of the live path. `nil` before a replay's
    /// first packet or for a live transport.
    public var replayCost: String? {
        let replay = (transport as? BTSnoopReplayTransport) ?? ((transport as? CapturingTransport)?.inner as? BTSnoopReplayTransport)
        guard let replay, let start = replayStartCPUSeconds, replay.replayedPacketCount > 0 else { return nil }
        let seconds = ProcessCPUTime.seconds() - start
        let perPacket = seconds / Double(replay.replayedPacketCount) * 1e6
        return "\(replay.replayedPacketCount) packets, \(JSONWriter.format(seconds, fractionDigits: 3) ?? "?") s of CPU "
            + "(\(JSONWriter.format(perPacket, fractionDigits: 2) ?? "?") µs a packet)"
    }
}
