extension Store {
    /// The pending events after `afterSequence`, in sequence order: `each` gets each one's
    /// sequence and person. With `afterSequence` 0 that is the whole backlog (what the
    /// forwarder reads once at start); with the newest sequence it has seen, one index
    /// probe plus the events committed since.
    public func forEachPendingEvent(after afterSequence: Int64, _ each: (_ sequence: Int64, _ personId: String) -> Void) throws(StoreError) {
        try statements.pendingAfter.query([.integer(afterSequence)]) { row in
            each(row.int64(0), row.text(1))
            return true
        }
    }

    /// The sequence of `personId`'s oldest pending event (the only one of theirs that may
    /// be sent: per-person order), `nil` when none is pending. One index probe, whatever
    /// the backlog.
    public func pendingHead(personId: String) throws(StoreError) -> Int64? {
        var head: Int64?
        try statements.pendingHead.query([.text(personId)]) { row in
            head = row.int64(0)
            return false
        }
        return head
    }

    /// One event by sequence.
    public func entry(sequence: Int64) throws(StoreError) -> OutboxEntry? {
        var found: OutboxEntry?
        try statements.entry.query([.integer(sequence)]) { row in
            found = Self.entry(from: row)
            return false
        }
        return found
    }

    // MARK: Outcomes

    /// Records the outcomes of delivery attempts in one transaction. An outcome for an
    /// event that is no longer pending (another process moved it) changes nothing.
    public func record(_ records: [DeliveryRecord], atMillis now: Int64) throws(StoreError) {
        guard !records.isEmpty else { return }
        var finished = OutboxStateCounts()
        try relaxedTransaction { () throws(StoreError) in
            var lastSuccess = false
            var lastError: (DeliveryErrorClass, String)?
            for record in records {
                switch record {
                case let .sent(sequence, status):
                    try statements.markFinal.run([.integer(Int64(OutboxState.sent.rawValue)), .integer(Int64(status)), .null, .integer(now), .integer(sequence)])
                    if connection.changes > 0 { finished.add(1, to: .sent) }
                    lastSuccess = true
                case let .rejected(sequence, status):
                    try statements.markFinal.run([.integer(Int64(OutboxState.rejected.rawValue)), .integer(Int64(status)), .text("HTTP \(status): refused by server policy"), .integer(now), .integer(sequence)])
                    if connection.changes > 0 { finished.add(1, to: .rejected) }
                    lastError = (.rejected, "HTTP \(status)")
                case let .dead(sequence, status, error):
                    try statements.markFinal.run([.integer(Int64(OutboxState.dead.rawValue)), .integer(Int64(status)), .text(error), .integer(now), .integer(sequence)])
                    if connection.changes > 0 { finished.add(1, to: .dead) }
                    lastError = (.client, error)
                case let .retry(sequence, at, errorClass, error):
                    try statements.scheduleRetry.run([.integer(at), .null, .text(error), .integer(now), .integer(sequence)])
                    lastError = (errorClass, error)
                }
            }
            if lastSuccess { try statements.setMetaInt.run([.text("last_success_ms"), .integer(now)]) }
            if let (errorClass, error) = lastError {
                try statements.setMetaInt.run([.text("last_error_ms"), .integer(now)])
                try statements.setMetaText.run([.text("last_error_class"), .text(errorClass.rawValue)])
                try statements.setMetaText.run([.text("last_error"), .text(error)])
            }
        }
        committedStateChanges { counts in
            counts.pending -= finished.sent + finished.rejected + finished.dead
            counts.sent += finished.sent
            counts.rejected += finished.rejected
            counts.dead += finished.dead
        }
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

    /// Counts per state, the oldest pending event's age and the last outcomes.
    public func status(nowMillis: Int64) throws(StoreError) -> OutboxStatus {
        let counts = try currentStateCounts()
        var status = OutboxStatus(pending: counts.pending, sent: counts.sent, rejected: counts.rejected, dead: counts.dead,
                                  oldestPendingAgeMillis: nil, lastSuccessMillis: nil, lastErrorMillis: nil,
                                  lastErrorClass: nil, lastError: nil, lastSequence: 0, maximumEvents: configuration.maximumEvents)
        try statements.oldestPending.query { row in
            let (age, overflow) = nowMillis.subtractingReportingOverflow(row.int64(0))
            status.oldestPendingAgeMillis = overflow ? 0 : max(0, age)
            return false
        }
        try statements.meta.query { row in
            switch row.text(0) {
            case "next_sequence": status.lastSequence = max(0, row.int64(1) &- 1)
            case "last_success_ms": status.lastSuccessMillis = row.optionalInt64(1)
            case "last_error_ms": status.lastErrorMillis = row.optionalInt64(1)
            case "last_error_class": status.lastErrorClass = row.optionalText(2).map(DeliveryErrorClass.init(rawValue:))
            case "last_error": status.lastError = row.optionalText(2)
            default: break
            }
            return true
        }
        return status
    }

    /// Events in the given states, in sequence order, starting after `afterSequence`.
    /// `each` returns `false` to stop. Streams: memory stays bounded whatever the backlog.
    public func forEachEntry(states: Set<OutboxState>, afterSequence: Int64 = 0, limit: Int = .max,
                             _ each: (OutboxEntry) -> Bool) throws(StoreError) {
        guard !states.isEmpty, limit > 0 else { return }
        let placeholders = states.map { String($0.rawValue) }.sorted().joined(separator: ", ")
        let statement = try connection.prepare(
            "SELECT \(Statements.entryColumns) FROM events WHERE state IN (\(placeholders)) AND sequence > ? ORDER BY sequence")
        var count = 0
        try statement.query([.integer(afterSequence)]) { row in
            count += 1
            return each(Self.entry(from: row)) && count < limit
        }
    }

    /// Up to `limit` events in the given states, in sequence order.
    public func list(states: Set<OutboxState>, limit: Int) throws(StoreError) -> [OutboxEntry] {
        var entries: [OutboxEntry] = []
        try forEachEntry(states: states, limit: limit) { entry in
            entries.append(entry)
            return true
        }
        return entries
    }

    /// Every event in the given states, for `outbox export`.
    public func export(states: Set<OutboxState>, _ each: (OutboxEntry) -> Void) throws(StoreError) {
        try forEachEntry(states: states) { entry in
            each(entry)
            return true
        }
    }

    /// Puts every dead letter back to pending, due now; returns how many.
    @discardableResult
    public func retryDead(nowMillis: Int64) throws(StoreError) -> Int {
        let revived = try relaxedTransaction { () throws(StoreError) in
            let statement = try connection.prepare(
                "UPDATE events SET state = 0, attempts = 0, next_attempt_ms = ?, updated_ms = ? WHERE state = 3")
            try statement.run([.integer(nowMillis), .integer(nowMillis)])
            return connection.changes
        }
        committedStateChanges { counts in
            counts.dead -= revived
            counts.pending += revived
        }
        return revived
    }

    /// Makes every pending event due now (the operator changed the token, URL or CA:
    /// waiting out a long backoff would only delay the fix); returns how many.
    @discardableResult
    public func retryPendingNow(nowMillis: Int64) throws(StoreError) -> Int {
        try relaxedTransaction { () throws(StoreError) in
            let statement = try connection.prepare(
                "UPDATE events SET next_attempt_ms = ? WHERE state = 0 AND next_attempt_ms > ?")
            try statement.run([.integer(nowMillis), .integer(nowMillis)])
            return connection.changes
        }
    }

    /// Deletes delivered rows (sent, rejected) older than the configured retention, in
    /// batches (`pruneBatch`); returns how many. Undelivered rows are never pruned here.
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

extension Store {
    /// Whether any event is pending (cheap: one index probe).
    public func hasPending() throws(StoreError) -> Bool {
        var found = false
        try statements.anyPending.query { _ in
            found = true
            return false
        }
        return found
    }
}
