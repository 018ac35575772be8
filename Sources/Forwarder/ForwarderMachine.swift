import EventLoop
import Store

/// Every decision of delivery (docs/event-api.md, "Answers and retries"), as a sans-IO
/// state machine: what to send next, how an answer is recorded, how long a retry waits,
/// when the server refused the token, what a store outage means, when to look again.
///
/// Inputs are the forwarder's happenings with the time they happened (`now`, monotonic;
/// `wallMillis` where a time is stored or shown); each returns the ``ForwarderAction``s
/// to perform in order. Store reads and writes are actions whose results come back as
/// inputs. ``Forwarder`` performs them on the loop (libcurl, SQLite, timers); tests drive
/// the machine alone on a virtual clock.
///
/// Its pure parts: ``DeliveryQueue`` (who goes next, retry waits), ``Backoff`` (how long),
/// ``StoreOutage`` (the store's pause), ``DeliveryDecision`` (what an answer means).
struct ForwarderMachine {
    private(set) var configuration: ForwarderConfiguration
    /// How often the store is checked for other processes' commits.
    var pollInterval: Duration = .milliseconds(250)
    private var backoff: Backoff
    private var jitter: JitterSource

    private var queue = DeliveryQueue()
    private var inFlight: [UInt64: OutboxEntry] = [:]
    /// Whether the pending events are to be read from the first (at start, and after
    /// another process changed the outbox) rather than from the newest one seen.
    private var rereadPending = true
    private var storeOutage = StoreOutage()
    /// The wake-up timer's deadline, while one is armed.
    private var wakeDeadline: Instant?
    private(set) var isRunning = false
    /// The last answer was a failure: the next success is worth a line.
    private var failing = false
    /// The server refused the token (401/403) and nothing succeeded since, nor did the
    /// token change.
    private(set) var authRefused = false

    /// The pump in progress: when it started and the persons taken for it, whose rows are
    /// being read.
    private var pumpNow: Instant = .zero
    private var pumpWallMillis: Int64 = 0
    private var taking: [(personId: String, sequence: Int64)] = []

    init(configuration: ForwarderConfiguration, jitterSeed: UInt64) {
        self.configuration = configuration
        backoff = Backoff(maximum: configuration.maxBackoff)
        jitter = JitterSource(seed: jitterSeed)
    }

    var inFlightCount: Int { inFlight.count }
    /// When the wake-up timer is due, if armed (for tests: no busy loop).
    var nextWake: Instant? { wakeDeadline }

    // MARK: Life cycle

    mutating func start() -> [ForwarderAction] {
        guard !isRunning else { return [] }
        isRunning = true
        rereadPending = true
        return [.schedulePoll(after: pollInterval), .pump]
    }

    /// Requests in flight are abandoned: their events stay pending and are sent again next
    /// time, under the same key.
    mutating func stop() -> [ForwarderAction] {
        isRunning = false
        for entry in inFlight.values { queue.ended(personId: entry.personId) }
        inFlight.removeAll()
        wakeDeadline = nil
        return [.cancelAll]
    }

    /// New settings (SIGHUP), already checked; `trustChanged` says the CA bundle differs.
    /// Requests in flight finish with the old ones.
    mutating func reload(_ fresh: ForwarderConfiguration, trustChanged: Bool, wallMillis: Int64) -> [ForwarderAction] {
        let old = configuration
        if fresh.token != old.token { authRefused = false }
        configuration = fresh
        var actions: [ForwarderAction] = []
        if fresh.token != old.token || fresh.url != old.url || trustChanged {
            // The operator fixed something: retry now rather than after a long backoff.
            queue.releaseAllHolds()
            actions.append(.retryPendingNow(atMillis: wallMillis))
        }
        backoff = Backoff(maximum: fresh.maxBackoff)
        actions.append(.setMaxConnections(fresh.maxInFlight))
        actions.append(.pump)
        return actions
    }

    // MARK: Happenings

    /// New events were committed.
    func eventsCommitted() -> [ForwarderAction] { [.pump] }

    mutating func wakeFired() -> [ForwarderAction] {
        wakeDeadline = nil
        return [.pump]
    }

    /// The poll timer fired: look at the store, then poll again.
    func pollDue() -> [ForwarderAction] {
        guard isRunning else { return [] }
        return [.checkForExternalChanges, .schedulePoll(after: pollInterval)]
    }

    /// Another process changed the outbox (`outbox retry-dead`, events committed elsewhere).
    mutating func outboxChangedElsewhere() -> [ForwarderAction] {
        rereadPending = true
        return [.pump]
    }

    // MARK: Sending

    /// Looks for work: reads what became pending, unless the store is paused or every
    /// slot is taken.
    mutating func pump(now: Instant, wallMillis: Int64) -> [ForwarderAction] {
        guard isRunning, configuration.maxInFlight - inFlight.count > 0 else { return [] }
        if storeOutage.isPaused(at: now), let until = storeOutage.pausedUntil { return wake(at: until) }
        pumpNow = now
        pumpWallMillis = wallMillis
        // Every pending event is due as far as the store goes (its stored retry times are
        // for people to read); who waits is decided here, on the monotonic clock.
        queue.releaseHolds(at: now)
        if rereadPending { queue.forgetHeads() }
        // Read again next time unless this read succeeds.
        rereadPending = true
        return [.readPending(after: queue.newestSequence)]
    }

    /// A pending event committed since the queue last looked (in sequence order).
    mutating func sawPending(sequence: Int64, personId: String) {
        queue.sawPending(sequence: sequence, personId: personId)
    }

    /// The pending events are read: take the persons whose head may go now.
    mutating func pendingRead() -> [ForwarderAction] {
        rereadPending = false
        taking = queue.take(limit: configuration.maxInFlight - inFlight.count)
        if taking.isEmpty { return entriesRead([]) }
        return [.readEntries(sequences: taking.map(\.sequence))]
    }

    /// The rows of the persons taken, in order (nil: gone).
    mutating func entriesRead(_ entries: [OutboxEntry?]) -> [ForwarderAction] {
        var sends: [ForwarderAction] = []
        var failedToStart: [DeliveryRecord] = []
        var failedPersons: [String] = []
        for ((personId, _), entry) in zip(taking, entries) {
            guard let entry, entry.state == .pending else {
                // Another process moved it since the pending events were read.
                queue.ended(personId: personId)
                rereadPending = true
                continue
            }
            guard let headers = RequestHeaders.lines(idempotencyKey: entry.idempotencyKey, configuration: configuration) else {
                failedToStart.append(.dead(sequence: entry.sequence, status: 0, error: "a header value holds a control character"))
                failedPersons.append(entry.personId)
                continue
            }
            let request = TransferRequest(
                url: configuration.eventsURL, headers: headers, body: entry.body,
                timeout: configuration.timeout, connectTimeout: configuration.connectTimeout, caBundle: nil)
            sends.append(.send(request, entry: entry))
        }
        taking = []
        // The earliest retry wait first: a send refused or a store failure below may
        // only bring the wake-up forward.
        var actions = queue.nextHoldEnd.map { wake(at: $0) } ?? []
        actions += sends
        if !failedToStart.isEmpty { actions.append(.record(failedToStart, finishing: failedPersons, atMillis: pumpWallMillis)) }
        return actions
    }

    mutating func started(transfer: UInt64, entry: OutboxEntry) {
        inFlight[transfer] = entry
    }

    /// The HTTP layer refused to start the request: the person tries again in a second.
    mutating func startFailed(_ error: ForwarderError, entry: OutboxEntry) -> [ForwarderAction] {
        let due = pumpNow + .seconds(1)
        queue.retry(personId: entry.personId, at: due)
        return [.report(.requestFailed(error))] + wake(at: due)
    }

    // MARK: Outcomes

    /// Transfers finished (one batch of libcurl's completions): record them in one
    /// transaction, then tell, then look for more work.
    mutating func answered(_ completions: [TransferCompletion], now: Instant, wallMillis: Int64) -> [ForwarderAction] {
        var actions: [ForwarderAction] = []
        var records: [DeliveryRecord] = []
        var finishing: [String] = []
        var events: [ForwarderEvent] = []
        for (id, result) in completions {
            guard let entry = inFlight.removeValue(forKey: id) else { continue }
            switch DeliveryDecision.classify(result) {
            case let .sent(status):
                finishing.append(entry.personId)
                records.append(.sent(sequence: entry.sequence, status: status))
                events.append(.delivered(sequence: entry.sequence, key: entry.idempotencyKey, status: status))
                actions.append(.reportDelivered(createdAtMillis: entry.createdAtMillis, deliveredAtMillis: wallMillis))
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
                let delay = retryDelay(failures: entry.attempts + 1, retryAfter: retryAfter, long: long, nowMillis: wallMillis)
                let delayMillis = Backoff.milliseconds(delay)
                queue.retry(personId: entry.personId, at: now + delay)
                // The wall-clock time is stored for `outbox list` only.
                records.append(.retry(sequence: entry.sequence, atMillis: wallMillis + delayMillis, errorClass: errorClass, error: message))
                events.append(.retrying(sequence: entry.sequence, key: entry.idempotencyKey, errorClass: errorClass, message: message, delayMillis: delayMillis))
                if errorClass == .auth { authRefused = true }
                if !failing {
                    failing = true
                    events.append(.failing(errorClass: errorClass, message: message))
                }
            }
        }
        actions.append(.record(records, finishing: finishing, atMillis: wallMillis))
        actions += events.map { .report($0) }
        actions.append(.pump)
        return actions
    }

    /// The backoff schedule, lengthened (never shortened) by `Retry-After`, which is
    /// capped at `max_backoff_s`: a `Retry-After: 0` or a date in the past from a broken
    /// proxy must not turn retries into a tight loop.
    mutating func retryDelay(failures: Int, retryAfter: String?, long: Bool, nowMillis: Int64) -> Duration {
        let floor = long ? backoff.longDelay(unit: jitter.unit()) : backoff.delay(failures: failures, unit: jitter.unit())
        guard let retryAfter, let asked = RetryAfter.delay(retryAfter, nowMillis: nowMillis) else { return floor }
        return max(floor, min(asked, configuration.maxBackoff))
    }

    // MARK: The store

    /// `personId`'s outcome is recorded; `nextHead` is their oldest pending event now.
    mutating func personFinished(_ personId: String, nextHead: Int64?) {
        queue.finished(personId: personId, nextHead: nextHead)
    }

    /// A store write succeeded: an outage, if any, is over.
    mutating func storeWrote() -> [ForwarderAction] {
        storeOutage.wrote() ? [.report(.storeRecovered)] : []
    }

    /// Reading the pending events or the taken rows failed: the persons taken go back.
    mutating func storeReadFailed(_ error: StoreError, at now: Instant) -> [ForwarderAction] {
        for (personId, _) in taking { queue.ended(personId: personId) }
        taking = []
        return storeFailed(error, at: now)
    }

    /// Recording outcomes failed: the events stay pending in the store and are sent again,
    /// same keys, once the store's pause is over. (A person already moved on is not moved
    /// back.)
    mutating func recordFailed(finishing: [String], _ error: StoreError, at now: Instant) -> [ForwarderAction] {
        for personId in finishing { queue.ended(personId: personId) }
        return storeFailed(error, at: now)
    }

    /// A store operation failed: pause store work (see ``StoreOutage``) and say so once.
    mutating func storeFailed(_ error: StoreError, at now: Instant) -> [ForwarderAction] {
        var actions: [ForwarderAction] = []
        if storeOutage.failed(at: now) { actions.append(.report(.storeFailed(error))) }
        if isRunning, let until = storeOutage.pausedUntil { actions += wake(at: until) }
        return actions
    }

    // MARK: Timers

    /// Arms the wake-up for `deadline` unless an earlier one is armed.
    private mutating func wake(at deadline: Instant) -> [ForwarderAction] {
        if let current = wakeDeadline, current <= deadline { return [] }
        wakeDeadline = deadline
        return [.armWake(at: deadline)]
    }
}
