import EventLoop
import Store

/// Delivers the outbox to the server (see docs/event-api.md), on the event loop, without ever
/// blocking it: libcurl's multi interface runs the requests while scanning and presence
/// go on. The outbox's sink `server` (`OutboxSink`): it reads and records only that sink's
/// deliveries, so another sink's progress, outage or backoff is not its concern.
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
///
/// Those decisions are ``ForwarderMachine``'s; this class only feeds it the loop's
/// happenings and performs its actions in order (libcurl, SQLite, timers).
public final class Forwarder: OutboxSink {
    /// Its sink in the store.
    public let name = Store.serverSink
    public var configuration: ForwarderConfiguration { machine.configuration }
    private var machine: ForwarderMachine
    private let store: Store
    private let loop: EventLoop
    private let transfers: any TransferSession
    private var caBundle: [UInt8]?
    private let onEvent: (ForwarderEvent) -> Void
    private var wakeTimer: EventLoop.TimerHandle?
    private var pollTimer: EventLoop.TimerHandle?
    /// Performing a pump's actions: a kick from inside them (a callback) is not a second
    /// pump on top of the first.
    private var pumping = false
    /// How often the store is checked for other processes' commits.
    public var pollInterval: Duration {
        get { machine.pollInterval }
        set { machine.pollInterval = newValue }
    }
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
        self.onEvent = onEvent
        machine = ForwarderMachine(configuration: configuration, jitterSeed: jitterSeed)
        caBundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        self.transfers = transfers
        transfers.onCompletions = { [unowned self] completions in
            self.perform(self.machine.answered(completions, now: self.loop.now, wallMillis: self.loop.wallMilliseconds))
        }
    }

    deinit {
        transfers.cancelAll()
    }

    /// Starts delivering what the outbox holds.
    public func start() {
        perform(machine.start())
    }

    /// Stops: requests in flight are abandoned (their events stay pending and are sent
    /// again next time, under the same key).
    public func stop() {
        perform(machine.stop())
    }

    /// New events were committed: look for work now.
    public func kick() {
        perform(machine.eventsCommitted())
    }

    /// New settings (SIGHUP: a new token, URL or CA). Requests in flight finish with the
    /// old ones.
    public func reload(_ configuration: ForwarderConfiguration) throws(ForwarderError) {
        try configuration.checkTransport()
        let bundle = try configuration.caFile.map { path throws(ForwarderError) in try CABundle.load(caFile: path) }
        let trustChanged = bundle != caBundle
        caBundle = bundle
        perform(machine.reload(configuration, trustChanged: trustChanged, wallMillis: loop.wallMilliseconds))
    }

    public var inFlightCount: Int { machine.inFlightCount }

    /// Its backlog, ages, last outcomes and what the amber LED should show.
    public func status() throws(StoreError) -> ForwarderStatus {
        let outbox = try store.status(sink: name, nowMillis: loop.wallMilliseconds)
        return ForwarderStatus(outbox: outbox, inFlight: machine.inFlightCount, authRefused: machine.authRefused)
    }

    /// Its state for the fleet.
    public func sinkStatus() -> SinkStatus? {
        guard let status = try? status() else { return nil }
        return SinkStatus(name: name, outbox: status.outbox, inFlight: status.inFlight, credentialsRefused: status.authRefused)
    }

    /// The machine's retry delay (its jitter drawn as an answer's would be).
    func retryDelay(failures: Int, retryAfter: String?, long: Bool, nowMillis: Int64) -> Duration {
        machine.retryDelay(failures: failures, retryAfter: retryAfter, long: long, nowMillis: nowMillis)
    }

    // MARK: Performing

    private func pump() {
        guard !pumping else { return }
        pumping = true
        defer { pumping = false }
        perform(machine.pump(now: loop.now, wallMillis: loop.wallMilliseconds))
    }

    /// Performs `actions` in order, feeding each result back to the machine at once (and
    /// performing what that returns) before the next.
    private func perform(_ actions: [ForwarderAction]) {
        for action in actions {
            switch action {
            case let .readPending(after):
                do throws(StoreError) {
                    try store.forEachPendingEvent(sink: name, after: after) { sequence, personId in
                        machine.sawPending(sequence: sequence, personId: personId)
                    }
                } catch {
                    perform(machine.storeReadFailed(error, at: loop.now))
                    continue
                }
                perform(machine.pendingRead())
            case let .readEntries(sequences):
                var entries: [OutboxEntry?] = []
                do throws(StoreError) {
                    for sequence in sequences { entries.append(try store.entry(sink: name, sequence: sequence)) }
                } catch {
                    perform(machine.storeReadFailed(error, at: loop.now))
                    continue
                }
                perform(machine.entriesRead(entries))
            case .send(var request, let entry):
                request.caBundle = caBundle
                do throws(ForwarderError) {
                    machine.started(transfer: try transfers.start(request), entry: entry)
                } catch {
                    perform(machine.startFailed(error, entry: entry))
                }
            case let .record(records, finishing, atMillis):
                record(records, finishing: finishing, atMillis: atMillis)
            case let .retryPendingNow(atMillis):
                do throws(StoreError) {
                    try store.retryPendingNow(sink: name, nowMillis: atMillis)
                } catch {
                    perform(machine.storeFailed(error, at: loop.now))
                    continue
                }
                perform(machine.storeWrote())
            case .checkForExternalChanges:
                let changed: Bool
                do throws(StoreError) {
                    changed = try store.hasExternalChanges()
                } catch {
                    perform(machine.storeFailed(error, at: loop.now))
                    continue
                }
                if changed { perform(machine.outboxChangedElsewhere()) }
            case let .armWake(deadline):
                if let wakeTimer { loop.cancel(wakeTimer) }
                wakeTimer = loop.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    wakeTimer = nil
                    perform(machine.wakeFired())
                }
            case let .schedulePoll(interval):
                pollTimer = loop.schedule(after: interval) { [weak self] in
                    guard let self else { return }
                    perform(machine.pollDue())
                }
            case .cancelAll:
                transfers.cancelAll()
                if let wakeTimer { loop.cancel(wakeTimer) }
                if let pollTimer { loop.cancel(pollTimer) }
                wakeTimer = nil
                pollTimer = nil
            case let .setMaxConnections(count):
                transfers.setMaxConnections(count)
            case let .report(event):
                onEvent(event)
            case let .reportDelivered(createdAtMillis, deliveredAtMillis):
                onDelivered?(createdAtMillis, deliveredAtMillis)
            case .pump:
                pump()
            }
        }
    }

    /// Records outcomes in one transaction, then reads the next pending event of each
    /// person in `finishing`.
    private func record(_ records: [DeliveryRecord], finishing: [String], atMillis: Int64) {
        do throws(StoreError) {
            try store.record(records, sink: name, atMillis: atMillis)
        } catch {
            perform(machine.recordFailed(finishing: finishing, error, at: loop.now))
            return
        }
        perform(machine.storeWrote())
        do throws(StoreError) {
            for personId in finishing { machine.personFinished(personId, nextHead: try store.pendingHead(sink: name, personId: personId)) }
        } catch {
            perform(machine.recordFailed(finishing: finishing, error, at: loop.now))
        }
    }
}
