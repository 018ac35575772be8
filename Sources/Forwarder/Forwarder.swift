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
public final class Forwarder {
    public private(set) var configuration: ForwarderConfiguration
    private let store: Store
    private let loop: EventLoop
    private let transfers: HTTPTransfers
    private var backoff: Backoff
    private var jitter: JitterSource
    private var caBundle: [UInt8]?
    private let onEvent: (ForwarderEvent) -> Void

    private struct InFlight {
        var entry: OutboxEntry
    }

    private var inFlight: [UInt64: InFlight] = [:]
    private var inFlightPersons: Set<String> = []
    private var wakeTimer: EventLoop.TimerHandle?
    private var wakeDeadlineMillis: Int64?
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
    public init(store: Store, loop: EventLoop, configuration: ForwarderConfiguration,
                jitterSeed: UInt64 = UInt64.random(in: .min ... .max),
                onEvent: @escaping (ForwarderEvent) -> Void = { _ in }) throws(ForwarderError) {
        self.store = store
        self.loop = loop
        self.configuration = configuration
        self.onEvent = onEvent
        backoff = Backoff(maximum: configuration.maxBackoff)
        jitter = JitterSource(seed: jitterSeed)
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        transfers = try HTTPTransfers(loop: loop, maxConnections: configuration.maxInFlight)
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
        wakeDeadlineMillis = nil
        pollTimer = nil
    }

    /// New events were committed: look for work now.
    public func kick() {
        pump()
    }

    /// New settings (SIGHUP: a new token, URL or CA). Requests in flight finish with the
    /// old ones.
    public func reload(_ configuration: ForwarderConfiguration) throws(ForwarderError) {
        let bundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        let old = self.configuration
        let serverChanged = configuration.token != old.token || configuration.url != old.url || bundle != caBundle
        if configuration.token != old.token { authRefused = false }
        self.configuration = configuration
        if serverChanged {
            // The operator fixed something: retry now rather than after a long backoff.
            do {
                try store.retryPendingNow(nowMillis: loop.clock.wallMilliseconds)
            } catch {
                onEvent(.storeFailed(error))
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
        let outbox = try store.status(nowMillis: loop.clock.wallMilliseconds)
        return ForwarderStatus(outbox: outbox, inFlight: inFlight.count, authRefused: authRefused)
    }

    // MARK: Sending

    private func pump() {
        guard running, !pumping else { return }
        pumping = true
        defer { pumping = false }
        let free = configuration.maxInFlight - inFlight.count
        guard free > 0 else { return }
        let now = loop.clock.wallMilliseconds
        let batch: DeliveryBatch
        do {
            batch = try store.nextDeliveries(limit: free, nowMillis: now, excludingPersons: inFlightPersons)
        } catch {
            onEvent(.storeFailed(error))
            wake(atMillis: now + 1_000, now: now)
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
                wake(atMillis: now + 1_000, now: now)
            }
        }
        if !failedToStart.isEmpty {
            do { try store.record(failedToStart, atMillis: now) } catch { onEvent(.storeFailed(error)) }
        }
        if let due = batch.nextDueMillis { wake(atMillis: due, now: now) }
    }

    /// Arms the wake-up timer for `atMillis` (wall clock) unless an earlier one is armed.
    private func wake(atMillis: Int64, now: Int64) {
        if let current = wakeDeadlineMillis, current <= atMillis, wakeTimer.map(loop.isScheduled) == true { return }
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeDeadlineMillis = atMillis
        let delay = Duration.milliseconds(max(0, atMillis - now))
        wakeTimer = loop.schedule(after: delay) { [weak self] in
            guard let self else { return }
            self.wakeTimer = nil
            self.wakeDeadlineMillis = nil
            self.pump()
        }
    }

    private func schedulePoll() {
        pollTimer = loop.schedule(after: pollInterval) { [weak self] in
            guard let self, self.running else { return }
            do throws(StoreError) {
                if try self.store.hasExternalChanges() { self.pump() }
            } catch {
                self.onEvent(.storeFailed(error))
            }
            self.schedulePoll()
        }
    }

    /// Delivered rows are kept for `outbox list` for a while, then removed, so the file
    /// does not grow forever; undelivered ones are never pruned.
    private func prune() {
        do {
            try store.pruneDelivered(nowMillis: loop.clock.wallMilliseconds)
        } catch {
            onEvent(.storeFailed(error))
        }
        pruneTimer = loop.schedule(after: pruneInterval) { [weak self] in
            guard let self, self.running else { return }
            self.prune()
        }
    }

    // MARK: Outcomes

    private func finished(_ completions: [HTTPTransfers.Completion]) {
        let now = loop.clock.wallMilliseconds
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
        } catch {
            // The events stay pending in the store: they are sent again, same keys.
            onEvent(.storeFailed(error))
        }
        for event in events { onEvent(event) }
        pump()
    }

    /// Retry-After wins when present (capped at `max_backoff_s`); else the schedule.
    func retryDelay(failures: Int, retryAfter: String?, long: Bool, nowMillis: Int64) -> Duration {
        if let retryAfter, let asked = RetryAfter.delay(retryAfter, nowMillis: nowMillis) {
            return min(asked, configuration.maxBackoff)
        }
        return long ? backoff.longDelay(unit: jitter.unit()) : backoff.delay(failures: failures, unit: jitter.unit())
    }
}
