extension Store {
    /// The HTTP server's sink (SPEC §7): version 1's delivery states are its, and a new
    /// outbox starts with it configured (docs/event-api.md, "Sinks").
    public static let serverSink = "server"

    // MARK: Reading what a sink has to deliver

    /// The events `sink` has pending after `afterSequence`, in sequence order, at most
    /// `limit`: the bodies and keys to deliver, with this sink's attempts so far. One index
    /// range (`deliveries_by_state`): the cost follows `limit`, not the table or the
    /// backlog. Read from the sequence last returned to go on.
    public func pendingEvents(sink: String, after afterSequence: Int64, limit: Int) throws(StoreError) -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        var entries: [OutboxEntry] = []
        try statements.pendingEntriesAfter.query([.text(sink), .integer(afterSequence), .integer(Int64(limit))]) { row in
            entries.append(Self.entry(from: row))
            return true
        }
        return entries
    }

    /// The events `sink` has pending after `afterSequence`, in sequence order: `each` gets
    /// each one's sequence and person. With `afterSequence` 0 that is the whole backlog (what
    /// the HTTP forwarder reads once at start); with the newest sequence it has seen, one
    /// index probe plus the events committed since.
    public func forEachPendingEvent(sink: String = Store.serverSink, after afterSequence: Int64,
                                    _ each: (_ sequence: Int64, _ personId: String) -> Void) throws(StoreError) {
        try statements.pendingAfter.query([.text(sink), .integer(afterSequence)]) { row in
            each(row.int64(0), row.text(1))
            return true
        }
    }

    /// The sequence of `personId`'s oldest event `sink` has pending (the only one of
    /// theirs the HTTP forwarder may send: per-person order), `nil` when none is. One index
    /// probe, whatever the backlog.
    public func pendingHead(sink: String = Store.serverSink, personId: String) throws(StoreError) -> Int64? {
        var head: Int64?
        try statements.pendingHead.query([.text(sink), .text(personId)]) { row in
            head = row.int64(0)
            return false
        }
        return head
    }

    /// One event by sequence, with `sink`'s delivery of it (nil when the outbox has no such
    /// event, or `sink` has no delivery of it).
    public func entry(sink: String = Store.serverSink, sequence: Int64) throws(StoreError) -> OutboxEntry? {
        var found: OutboxEntry?
        try statements.entry.query([.text(sink), .integer(sequence)]) { row in
            found = Self.entry(from: row)
            return false
        }
        return found
    }

    /// Whether `sink` has any event pending (cheap: one index probe).
    public func hasPending(sink: String = Store.serverSink) throws(StoreError) -> Bool {
        var found = false
        try statements.anyPending.query([.text(sink)]) { _ in
            found = true
            return false
        }
        return found
    }

    // MARK: Outcomes

    /// Records a batch of `sink`'s outcomes in one transaction: its deliveries move, its
    /// last success and last error are kept, and an event every configured sink now has is
    /// settled for retention. An outcome for an event `sink` no longer has pending (another
    /// process moved it, retention pruned it) changes nothing.
    public func record(_ outcomes: [SinkOutcome], sink: String, atMillis now: Int64) throws(StoreError) {
        try record(outcomes.map(RecordedOutcome.init), sink: sink, atMillis: now)
    }

    /// Records outcomes of delivery attempts in the HTTP server's terms (the answer's status
    /// kept with each), as `record(_:sink:atMillis:)` does.
    public func record(_ records: [DeliveryRecord], sink: String = Store.serverSink, atMillis now: Int64) throws(StoreError) {
        try record(records.map(RecordedOutcome.init), sink: sink, atMillis: now)
    }

    private func record(_ outcomes: [RecordedOutcome], sink: String, atMillis now: Int64) throws(StoreError) {
        guard !outcomes.isEmpty else { return }
        var finished = OutboxStateCounts()
        var settled = OutboxStateCounts()
        try relaxedTransaction { () throws(StoreError) in
            var lastSuccess = false
            var lastError: (DeliveryErrorClass, String)?
            for outcome in outcomes {
                let status: SQLiteStatement.Value = outcome.status.map { .integer(Int64($0)) } ?? .null
                let error: SQLiteStatement.Value = outcome.error.map { .text($0) } ?? .null
                if let state = outcome.state {
                    try statements.markFinal.run([.integer(Int64(state.rawValue)), status, error, .integer(now), .text(sink),
                                                  .integer(outcome.sequence)])
                    if connection.changes > 0 {
                        finished.add(1, to: state)
                        try settle(outcome.sequence, into: &settled)
                    }
                } else {
                    try statements.scheduleRetry.run([.integer(outcome.retryAtMillis), status, error, .integer(now), .text(sink), .integer(outcome.sequence)])
                }
                if let errorClass = outcome.errorClass {
                    lastError = (errorClass, outcome.lastErrorText ?? "")
                } else {
                    lastSuccess = true
                }
            }
            if lastSuccess { try statements.sinkSucceeded.run([.integer(now), .text(sink)]) }
            if let (errorClass, error) = lastError {
                try statements.sinkFailed.run([.integer(now), .text(errorClass.rawValue), .text(error), .text(sink)])
            }
        }
        committedStateChanges { counts in
            var mine = counts.sink(sink)
            mine.pending -= finished.sent + finished.rejected + finished.dead
            mine.sent += finished.sent
            mine.rejected += finished.rejected
            mine.dead += finished.dead
            counts.sinks[sink] = mine
            counts.settled.add(settled)
        }
    }

    /// Settles `sequence` again from its configured sinks' deliveries, counting into
    /// `changes` what it became (+1) and what it was (-1).
    func settle(_ sequence: Int64, into changes: inout OutboxStateCounts) throws(StoreError) {
        var before: OutboxState?
        try statements.settledState.query([.integer(sequence)]) { row in
            before = row.optionalInt64(0).map { OutboxState(rawValue: Int32(truncatingIfNeeded: $0)) }
            return false
        }
        var after: OutboxState?
        try statements.settle.query([.integer(sequence)]) { row in
            after = row.optionalInt64(0).map { OutboxState(rawValue: Int32(truncatingIfNeeded: $0)) }
            return false
        }
        guard before != after else { return }
        if let before { changes.add(-1, to: before) }
        if let after { changes.add(1, to: after) }
    }

    /// The server answered 201 or 200.
    public func markSent(sequence: Int64, status: Int, atMillis: Int64) throws(StoreError) {
        try record([.sent(sequence: sequence, status: status)], atMillis: atMillis)
    }

    /// The server refused the event by policy (409): kept, never retried.
    public func markRejected(sequence: Int64, status: Int, atMillis: Int64) throws(StoreError) {
        try record([.rejected(sequence: sequence, status: status)], atMillis: atMillis)
    }

    /// Another 4xx: the event becomes a dead letter.
    public func markDead(sequence: Int64, status: Int, error: String, atMillis: Int64) throws(StoreError) {
        try record([.dead(sequence: sequence, status: status, error: error)], atMillis: atMillis)
    }

    /// The attempt failed in a way worth retrying: try again at `atMillis`.
    public func scheduleRetry(sequence: Int64, atMillis: Int64, errorClass: DeliveryErrorClass, error: String, nowMillis: Int64) throws(StoreError) {
        try record([.retry(sequence: sequence, atMillis: atMillis, errorClass: errorClass, error: error)], atMillis: nowMillis)
    }

    // MARK: Inspection and repair

    /// `sink`'s figures: its deliveries per state, its oldest pending event's age and its
    /// last outcomes. The same work at 10 events as at 100,000.
    public func status(sink: String, nowMillis: Int64) throws(StoreError) -> OutboxStatus {
        let counts = try currentStateCounts().sink(sink)
        var status = OutboxStatus(pending: counts.pending, sent: counts.sent, rejected: counts.rejected, dead: counts.dead,
                                  oldestPendingAgeMillis: nil, lastSuccessMillis: nil, lastErrorMillis: nil,
                                  lastErrorClass: nil, lastError: nil, lastSequence: try lastSequence(),
                                  maximumEvents: configuration.maximumEvents, sink: sink)
        try statements.oldestPending.query([.text(sink)]) { row in
            status.oldestPendingAgeMillis = Self.age(of: row.int64(0), at: nowMillis)
            return false
        }
        try statements.sinks.query([.text(sink)]) { row in
            status.lastSuccessMillis = row.optionalInt64(2)
            status.lastErrorMillis = row.optionalInt64(3)
            status.lastErrorClass = row.optionalText(4).map(DeliveryErrorClass.init(rawValue:))
            status.lastError = row.optionalText(5)
            return false
        }
        return status
    }

    /// The whole outbox's figures, for what shows one outbox (the amber LED, `STATUS=`,
    /// the heartbeat's `outbox`, version 1's metrics): each count the largest of the
    /// configured sinks' (the one furthest behind; one sink: its own), the oldest pending
    /// age the oldest of theirs, the last success the oldest of theirs, the last error
    /// the latest. Without a sink every event kept counts as pending (it waits for one).
    /// Each sink's own figures: `status(sink:nowMillis:)`.
    public func status(nowMillis: Int64) throws(StoreError) -> OutboxStatus {
        let counts = try currentStateCounts()
        guard !counts.configured.isEmpty else {
            var status = OutboxStatus(pending: counts.undelivered, sent: 0, rejected: 0, dead: 0, oldestPendingAgeMillis: nil,
                                      lastSuccessMillis: nil, lastErrorMillis: nil, lastErrorClass: nil, lastError: nil,
                                      lastSequence: try lastSequence(), maximumEvents: configuration.maximumEvents)
            if counts.undelivered > 0 {
                try statements.oldestEvent.query { row in
                    status.oldestPendingAgeMillis = Self.age(of: row.int64(0), at: nowMillis)
                    return false
                }
            }
            return status
        }
        let sinks = try counts.configured.map { name throws(StoreError) in try status(sink: name, nowMillis: nowMillis) }
        return OutboxStatus(combining: sinks)
    }

    /// The configured sinks' own figures, in name order.
    public func sinkStatuses(nowMillis: Int64) throws(StoreError) -> [OutboxStatus] {
        try currentStateCounts().configured.map { name throws(StoreError) in try status(sink: name, nowMillis: nowMillis) }
    }

    static func age(of millis: Int64, at nowMillis: Int64) -> Int64 {
        let (age, overflow) = nowMillis.subtractingReportingOverflow(millis)
        return overflow ? 0 : max(0, age)
    }

    /// The highest sequence ever allocated (0 before the first event).
    func lastSequence() throws(StoreError) -> Int64 {
        var last: Int64 = 0
        try statements.nextSequence.query { row in
            last = max(0, row.int64(0) &- 1)
            return false
        }
        return last
    }

    /// `sink`'s deliveries in the given states, in sequence order, starting after
    /// `afterSequence`. `each` returns `false` to stop. Streams: memory stays bounded
    /// whatever the backlog.
    public func forEachEntry(sink: String = Store.serverSink, states: Set<OutboxState>, afterSequence: Int64 = 0,
                             limit: Int = .max, _ each: (OutboxEntry) -> Bool) throws(StoreError) {
        guard !states.isEmpty, limit > 0 else { return }
        let placeholders = states.map { String($0.rawValue) }.sorted().joined(separator: ", ")
        let statement = try connection.prepare("""
            SELECT \(Statements.entryColumns) FROM \(Statements.entryJoin)
            WHERE d.sink = ? AND d.state IN (\(placeholders)) AND d.sequence > ? ORDER BY d.sequence
            """)
        var count = 0
        try statement.query([.text(sink), .integer(afterSequence)]) { row in
            count += 1
            return each(Self.entry(from: row)) && count < limit
        }
    }

    /// Up to `limit` of `sink`'s deliveries in the given states, in sequence order.
    public func list(sink: String = Store.serverSink, states: Set<OutboxState>, limit: Int) throws(StoreError) -> [OutboxEntry] {
        var entries: [OutboxEntry] = []
        try forEachEntry(sink: sink, states: states, limit: limit) { entry in
            entries.append(entry)
            return true
        }
        return entries
    }

    /// Every delivery of `sink` in the given states, for `outbox export`.
    public func export(sink: String = Store.serverSink, states: Set<OutboxState>, _ each: (OutboxEntry) -> Void) throws(StoreError) {
        try forEachEntry(sink: sink, states: states) { entry in
            each(entry)
            return true
        }
    }

    /// Puts every dead letter of `sink` back to pending, due now; returns how many.
    @discardableResult
    public func retryDead(sink: String = Store.serverSink, nowMillis: Int64) throws(StoreError) -> Int {
        var revived: [Int64] = []
        var settled = OutboxStateCounts()
        try relaxedTransaction { () throws(StoreError) in
            let statement = try connection.prepare("""
                UPDATE deliveries SET state = 0, attempts = 0, next_attempt_ms = ?, updated_ms = ? WHERE sink = ? AND state = 3
                RETURNING sequence
                """)
            try statement.query([.integer(nowMillis), .integer(nowMillis), .text(sink)]) { row in
                revived.append(row.int64(0))
                return true
            }
            // Their events are no longer settled when `sink` is configured.
            for sequence in revived { try settle(sequence, into: &settled) }
        }
        committedStateChanges { counts in
            counts.sinks[sink, default: OutboxStateCounts()].dead -= revived.count
            counts.sinks[sink, default: OutboxStateCounts()].pending += revived.count
            counts.settled.add(settled)
        }
        return revived.count
    }

    /// Makes every event `sink` has pending due now (the operator changed the token, URL or
    /// CA: waiting out a long backoff would only delay the fix); returns how many.
    @discardableResult
    public func retryPendingNow(sink: String = Store.serverSink, nowMillis: Int64) throws(StoreError) -> Int {
        try relaxedTransaction { () throws(StoreError) in
            let statement = try connection.prepare(
                "UPDATE deliveries SET next_attempt_ms = ? WHERE sink = ? AND state = 0 AND next_attempt_ms > ?")
            try statement.run([.integer(nowMillis), .text(sink), .integer(nowMillis)])
            return connection.changes
        }
    }

    /// Deletes delivered events (every configured sink has them, none as a dead letter)
    /// older than the configured retention, in batches (`pruneBatch`); returns how many.
    /// Undelivered events are never pruned here.
    @discardableResult
    public func pruneDelivered(nowMillis: Int64) throws(StoreError) -> Int {
        let policy = RetentionPolicy(deliveredMillis: configuration.deliveredRetentionMillis, maximumDelivered: .max,
                                     deadMillis: .max, unsentMillis: nil)
        var total = 0
        while true {
            let (pruned, more) = try pruneBatch(nowMillis: nowMillis, policy: policy)
            total += pruned.total
            if !more { return total }
        }
    }
}

extension OutboxStatus {
    /// The whole outbox from its configured sinks' figures (see `Store.status(nowMillis:)`).
    init(combining sinks: [OutboxStatus]) {
        let first = sinks[0]
        self = first
        sink = nil
        for other in sinks.dropFirst() {
            pending = max(pending, other.pending)
            sent = max(sent, other.sent)
            rejected = max(rejected, other.rejected)
            dead = max(dead, other.dead)
            if let age = other.oldestPendingAgeMillis { oldestPendingAgeMillis = max(oldestPendingAgeMillis ?? age, age) }
            lastSuccessMillis = lastSuccessMillis.flatMap { mine in other.lastSuccessMillis.map { min(mine, $0) } }
            if let otherError = other.lastErrorMillis, otherError >= (lastErrorMillis ?? .min) {
                lastErrorMillis = otherError
                lastErrorClass = other.lastErrorClass
                lastError = other.lastError
            }
        }
    }
}
