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
/// - Retries wait on the monotonic clock (``RetrySchedule``): a stepped wall clock moves
///   no retry. When the store cannot record outcomes, store work pauses with its own
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
    private var inFlightPersons: Set<String> = []
    private var retries = RetrySchedule()
    private var storeOutage = StoreOutage()
    private var wakeTimer: EventLoop.TimerHandle?
    private var wakeDeadline: Instant?
    private var pollTimer: EventLoop.TimerHandle?
    private var pruneTimer: EventLoop.TimerHandle?
    /// How often delivered rows past their retention are pruned.
    public var pruneInterval: Duration = .seconds(3_600)
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
        schedulePoll()
        prune()
        pump()
    }

    /// Stops: requests in flight are abandoned (their events stay pending and are sent
    /// again next time, under the same key).
    public func stop() {
        running = false
        transfers.cancelAll()
        inFlight.removeAll()
        inFlightPersons.removeAll()
        if let wakeTimer { loop.cancel(wakeTimer) }
        if let pollTimer { loop.cancel(pollTimer) }
        if let pruneTimer { loop.cancel(pruneTimer) }
        pruneTimer = nil
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
            retries.releaseAll()
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
        let batch: DeliveryBatch
        do {
            // Every pending event is due as far as the store goes (its stored retry times
            // are for people to read); who waits is decided here, on the monotonic clock.
            let excluded = inFlightPersons.union(retries.held(at: now))
            batch = try store.nextDeliveries(limit: free, nowMillis: .max, excludingPersons: excluded)
        } catch {
            storeFailed(error)
            return
        }
        var failedToStart: [DeliveryRecord] = []
        for entry in batch.entries {
            guard let headers = RequestHeaders.lines(idempotencyKey: entry.idempotencyKey, configuration: configuration) else {
                failedToStart.append(.dead(sequence: entry.sequence, status: 0, error: "a header value holds a control character"))
                continue
            }
            let request = TransferRequest(
                url: configuration.eventsURL, headers: headers, body: entry.body,
                timeout: configuration.timeout, connectTimeout: configuration.connectTimeout, caBundle: caBundle)
            do {
                let id = try transfers.start(request)
                inFlight[id] = InFlight(entry: entry)
                inFlightPersons.insert(entry.personId)
            } catch {
                onEvent(.requestFailed(error))
                retries.hold(person: entry.personId, until: now + .seconds(1))
            }
        }
        if !failedToStart.isEmpty {
            do {
                try store.record(failedToStart, atMillis: wallNow)
                storeWrote()
            } catch {
                storeFailed(error)
            }
        }
        if let due = retries.nextDue { wake(at: due) }
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
                if try self.store.hasExternalChanges() { self.pump() }
            } catch {
                self.storeFailed(error)
            }
            self.schedulePoll()
        }
    }

    /// Delivered rows are kept for `outbox list` for a while, then removed, so the file
    /// does not grow forever; undelivered ones are never pruned.
    private func prune() {
        do {
            try store.pruneDelivered(nowMillis: loop.wallMilliseconds)
            storeWrote()
        } catch {
            storeFailed(error)
        }
        pruneTimer = loop.schedule(after: pruneInterval) { [weak self] in
            guard let self, self.running else { return }
            self.prune()
        }
    }

    // MARK: Outcomes

    private func finished(_ completions: [TransferCompletion]) {
        let now = loop.wallMilliseconds
        let monotonicNow = loop.now
        var records: [DeliveryRecord] = []
        var events: [ForwarderEvent] = []
        for (id, result) in completions {
            guard let flight = inFlight.removeValue(forKey: id) else { continue }
            let entry = flight.entry
            inFlightPersons.remove(entry.personId)
            switch DeliveryDecision.classify(result) {
            case let .sent(status):
                records.append(.sent(sequence: entry.sequence, status: status))
                events.append(.delivered(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
                onDelivered?(entry.createdAtMillis, now)
                authRefused = false
                if failing {
                    failing = false
                    events.append(.recovered)
                }
            case let .rejected(status):
                records.append(.rejected(sequence: entry.sequence, status: status))
                events.append(.rejected(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
            case let .dead(status):
                records.append(.dead(sequence: entry.sequence, status: status, error: "HTTP \(status)"))
                events.append(.deadLetter(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
            case let .retry(errorClass, message, retryAfter, long):
                let delay = retryDelay(failures: entry.attempts + 1, retryAfter: retryAfter, long: long, nowMillis: now)
                let delayMillis = Backoff.milliseconds(delay)
                retries.hold(person: entry.personId, until: monotonicNow + delay)
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
        do {
            try store.record(records, atMillis: now)
            storeWrote()
        } catch {
            // The events stay pending in the store: they are sent again, same keys, once
            // the store's pause is over.
            storeFailed(error)
        }
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
