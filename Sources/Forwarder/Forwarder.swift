import EventLoop
import Store

/// Delivers the outbox to the server (see docs/event-api.md), on the event loop, without ever
/// blocking it: libcurl's multi interface runs the requests while scanning and presence
/// go on.
///
/// - Up to `maxInFlight` requests at once, never two of one person, and a person's event
///   only after every earlier one of that person left the pending state: per person,
///   events arrive in sequence order.
/// - Outcomes are recorded in the store as requests finish (one transaction per batch);
///   an event is marked sent only after 201/200. A crash in between only means the event
///   is sent again under the same key (the server answers 200).
/// - The store is polled for other processes' changes (`outbox retry-dead`, events
///   committed elsewhere), so nothing waits for a kick that never comes.
/// - What goes next is chosen in memory (``DeliveryQueue``), at a cost that does not grow
///   with the backlog. Retries wait on the monotonic clock: a stepped wall clock moves no
///   retry. When the store cannot record outcomes, store work pauses with its own
///   backoff (``StoreOutage``) instead of re-sending the same events at once.
public final class Forwarder {
    public private(set) var configuration: ForwarderConfiguration
    private let store: Store
    private let loop: EventLoop
    private let transfers: any TransferSession
    private var backoff: Backoff
    private var jitter: JitterSource
    private var caBundle: [UInt8]?
    private let onEvent: (ForwarderEvent) -> Void

    private struct InFlight {
        var entry: OutboxEntry
    }

    private var inFlight: [UInt64: InFlight] = [:]
    private var queue = DeliveryQueue()
    /// Whether the pending events are to be read from the first (at start, and after
    /// another process changed the outbox) rather than from the newest one seen.
    private var rereadPending = true
    private var storeOutage = StoreOutage()
    private var wakeTimer: EventLoop.TimerHandle?
    private var wakeDeadline: Instant?
    private var pollTimer: EventLoop.TimerHandle?
    private var running = false
    private var pumping = false
    private var failing = false
    private var authRefused = false
    /// How often the store is checked for other processes' commits.
    public var pollInterval: Duration = .milliseconds(250)
    /// Told of each 201/200 with the event's decision time and now (wall-clock ms), for
    /// the delivery latency metric.
    public var onDelivered: ((_ createdAtMillis: Int64, _ deliveredAtMillis: Int64) -> Void)?

    /// - Parameters:
    ///   - jitterSeed: seeds the backoff jitter (fixed in tests, random in production).
    ///   - onEvent: told about deliveries, failures and recoveries, to log them.
    public convenience init(store: Store, loop: EventLoop, configuration: ForwarderConfiguration,
                            jitterSeed: UInt64 = UInt64.random(in: .min ... .max),
                            onEvent: @escaping (ForwarderEvent) -> Void = { _ in }) throws(ForwarderError) {
        let transfers = try HTTPTransfers(loop: loop, maxConnections: configuration.maxInFlight)
        try self.init(store: store, loop: loop, configuration: configuration, transfers: transfers,
                      jitterSeed: jitterSeed, onEvent: onEvent)
    }

    /// - Parameter transfers: libcurl's in production; a scripted one in tests.
    init(store: Store, loop: EventLoop, configuration: ForwarderConfiguration, transfers: any TransferSession,
         jitterSeed: UInt64 = UInt64.random(in: .min ... .max),
         onEvent: @escaping (ForwarderEvent) -> Void = { _ in }) throws(ForwarderError) {
        try configuration.checkTransport()
        self.store = store
        self.loop = loop
        self.configuration = configuration
        self.onEvent = onEvent
        backoff = Backoff(maximum: configuration.maxBackoff)
        jitter = JitterSource(seed: jitterSeed)
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        self.transfers = transfers
        transfers.onCompletions = { [unowned self] completions in self.finished(completions) }
    }

    deinit {
        transfers.cancelAll()
    }

    /// Starts delivering what the outbox holds.
    public func start() {
        guard !running else { return }
        running = true
        rereadPending = true
        schedulePoll()
        pump()
    }

    /// Stops: requests in flight are abandoned (their events stay pending and are sent
    /// again next time, under the same key).
    public func stop() {
        running = false
        transfers.cancelAll()
        for flight in inFlight.values { queue.ended(personId: flight.entry.personId) }
        inFlight.removeAll()
        if let wakeTimer { loop.cancel(wakeTimer) }
        if let pollTimer { loop.cancel(pollTimer) }
        wakeTimer = nil
        wakeDeadline = nil
        pollTimer = nil
    }

    /// New events were committed: look for work now.
    public func kick() {
        pump()
    }

    /// New settings (SIGHUP: a new token, URL or CA). Requests in flight finish with the
    /// old ones.
    public func reload(_ configuration: ForwarderConfiguration) throws(ForwarderError) {
        try configuration.checkTransport()
        let bundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        let old = self.configuration
        let serverChanged = configuration.token != old.token || configuration.url != old.url || bundle != caBundle
        if configuration.token != old.token { authRefused = false }
        self.configuration = configuration
        if serverChanged {
            // The operator fixed something: retry now rather than after a long backoff.
            queue.releaseAllHolds()
            do {
                try store.retryPendingNow(nowMillis: loop.wallMilliseconds)
                storeWrote()
            } catch {
                storeFailed(error)
            }
        }
        caBundle = bundle
        backoff = Backoff(maximum: configuration.maxBackoff)
        transfers.setMaxConnections(configuration.maxInFlight)
        pump()
    }

    public var inFlightCount: Int { inFlight.count }

    /// Backlog, ages, last outcomes and what the amber LED should show.
    public func status() throws(StoreError) -> ForwarderStatus {
        let outbox = try store.status(nowMillis: loop.wallMilliseconds)
        return ForwarderStatus(outbox: outbox, inFlight: inFlight.count, authRefused: authRefused)
    }

    // MARK: Sending

    private func pump() {
        guard running, !pumping else { return }
        pumping = true
        defer { pumping = false }
        let free = configuration.maxInFlight - inFlight.count
        guard free > 0 else { return }
        let now = loop.now
        if storeOutage.isPaused(at: now), let until = storeOutage.pausedUntil {
            wake(at: until)
            return
        }
        let wallNow = loop.wallMilliseconds
        // Every pending event is due as far as the store goes (its stored retry times are
        // for people to read); who waits is decided here, on the monotonic clock.
        queue.releaseHolds(at: now)
        var taken: [(personId: String, sequence: Int64)] = []
        var entries: [OutboxEntry] = []
        do {
            try readNewPendingEvents()
            taken = queue.take(limit: free)
            for (personId, sequence) in taken {
                guard let entry = try store.entry(sequence: sequence), entry.state == .pending else {
                    // Another process moved it since the pending events were read.
                    queue.ended(personId: personId)
                    rereadPending = true
                    continue
                }
                entries.append(entry)
            }
        } catch {
            for (personId, _) in taken { queue.ended(personId: personId) }
            storeFailed(error)
            return
        }
        var failedToStart: [DeliveryRecord] = []
        var failedPersons: [String] = []
        for entry in entries {
            guard let headers = RequestHeaders.lines(idempotencyKey: entry.idempotencyKey, configuration: configuration) else {
                failedToStart.append(.dead(sequence: entry.sequence, status: 0, error: "a header value holds a control character"))
                failedPersons.append(entry.personId)
                continue
            }
            let request = TransferRequest(
                url: configuration.eventsURL, headers: headers, body: entry.body,
                timeout: configuration.timeout, connectTimeout: configuration.connectTimeout, caBundle: caBundle)
            do {
                let id = try transfers.start(request)
                inFlight[id] = InFlight(entry: entry)
            } catch {
                onEvent(.requestFailed(error))
                queue.retry(personId: entry.personId, at: now + .seconds(1))
            }
        }
        if !failedToStart.isEmpty { recordOutcomes(failedToStart, finishing: failedPersons, atMillis: wallNow) }
        if let due = queue.nextHoldEnd { wake(at: due) }
    }

    /// Reads the pending events committed since the newest one seen (one index probe when
    /// there are none), or all of them when they are to be read again.
    private func readNewPendingEvents() throws(StoreError) {
        if rereadPending { queue.forgetHeads() }
        rereadPending = true
        try store.forEachPendingEvent(after: queue.newestSequence) { sequence, personId in
            queue.sawPending(sequence: sequence, personId: personId)
        }
        rereadPending = false
    }

    /// Records outcomes in one transaction and moves the persons in `finishing` (whose
    /// outcome is final) on to their next pending event. Persons whose outcome is a retry
    /// are already held.
    private func recordOutcomes(_ records: [DeliveryRecord], finishing: [String], atMillis now: Int64) {
        do {
            try store.record(records, atMillis: now)
            storeWrote()
            for personId in finishing { queue.finished(personId: personId, nextHead: try store.pendingHead(personId: personId)) }
        } catch {
            // The events stay pending in the store: they are sent again, same keys, once
            // the store's pause is over. (A person already moved on is not moved back.)
            for personId in finishing { queue.ended(personId: personId) }
            storeFailed(error)
        }
    }

    /// Arms the wake-up timer for `deadline` (monotonic) unless an earlier one is armed.
    private func wake(at deadline: Instant) {
        if let current = wakeDeadline, current <= deadline, wakeTimer.map(loop.isScheduled) == true { return }
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeDeadline = deadline
        wakeTimer = loop.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            self.wakeTimer = nil
            self.wakeDeadline = nil
            self.pump()
        }
    }

    /// A store operation failed: pause store work (see ``StoreOutage``) and say so once.
    private func storeFailed(_ error: StoreError) {
        let now = loop.now
        if storeOutage.failed(at: now) { onEvent(.storeFailed(error)) }
        if running, let until = storeOutage.pausedUntil { wake(at: until) }
    }

    /// A store write succeeded: an outage, if any, is over.
    private func storeWrote() {
        if storeOutage.wrote() { onEvent(.storeRecovered) }
    }

    private func schedulePoll() {
        pollTimer = loop.schedule(after: pollInterval) { [weak self] in
            guard let self, self.running else { return }
            do throws(StoreError) {
                if try self.store.hasExternalChanges() {
                    self.rereadPending = true
                    self.pump()
                }
            } catch {
                self.storeFailed(error)
            }
            self.schedulePoll()
        }
    }

    // MARK: Outcomes

    private func finished(_ completions: [TransferCompletion]) {
        let now = loop.wallMilliseconds
        let monotonicNow = loop.now
        var records: [DeliveryRecord] = []
        var finishing: [String] = []
        var events: [ForwarderEvent] = []
        for (id, result) in completions {
            guard let flight = inFlight.removeValue(forKey: id) else { continue }
            let entry = flight.entry
            switch DeliveryDecision.classify(result) {
            case let .sent(status):
                finishing.append(entry.personId)
                records.append(.sent(sequence: entry.sequence, status: status))
                events.append(.delivered(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
                onDelivered?(entry.createdAtMillis, now)
                authRefused = false
                if failing {
                    failing = false
                    events.append(.recovered)
                }
            case let .rejected(status):
                finishing.append(entry.personId)
                records.append(.rejected(sequence: entry.sequence, status: status))
                events.append(.rejected(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
            case let .dead(status):
                finishing.append(entry.personId)
                records.append(.dead(sequence: entry.sequence, status: status, error: "HTTP \(status)"))
                events.append(.deadLetter(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
            case let .retry(errorClass, message, retryAfter, long):
                let delay = retryDelay(failures: entry.attempts + 1, retryAfter: retryAfter, long: long, nowMillis: now)
                let delayMillis = Backoff.milliseconds(delay)
                queue.retry(personId: entry.personId, at: monotonicNow + delay)
                // The wall-clock time is stored for `outbox list` only.
                records.append(.retry(sequence: entry.sequence, atMillis: now + delayMillis, errorClass: errorClass, error: message))
                events.append(.retrying(sequence: entry.sequence, key: entry.idempotencyKey, errorClass: errorClass, message: message, delayMillis: delayMillis))
                if errorClass == .auth { authRefused = true }
                if !failing {
                    failing = true
                    events.append(.failing(errorClass: errorClass, message: message))
                }
            }
        }
        recordOutcomes(records, finishing: finishing, atMillis: now)
        for event in events { onEvent(event) }
        pump()
    }

    /// The backoff schedule, lengthened (never shortened) by `Retry-After`, which is
    /// capped at `max_backoff_s`: a `Retry-After: 0` or a date in the past from a broken
    /// proxy must not turn retries into a tight loop.
    func retryDelay(failures: Int, retryAfter: String?, long: Bool, nowMillis: Int64) -> Duration {
        let floor = long ? backoff.longDelay(unit: jitter.unit()) : backoff.delay(failures: failures, unit: jitter.unit())
        guard let retryAfter, let asked = RetryAfter.delay(retryAfter, nowMillis: nowMillis) else { return floor }
        return max(floor, min(asked, configuration.maxBackoff))
    }
}
