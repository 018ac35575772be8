/// One event as the outbox holds it, with one sink's delivery of it (`sink`): `state`,
/// `attempts`, `nextAttemptMillis`, `lastStatus`, `lastError` and `updatedAtMillis` are
/// that sink's.
public struct OutboxEntry: Hashable, Sendable {
    public var sequence: Int64
    public var idempotencyKey: String
    public var type: String
    public var personId: String
    /// The JSON body, exactly as it is sent.
    public var body: [UInt8]
    public var state: OutboxState
    public var attempts: Int
    public var nextAttemptMillis: Int64
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAtMillis: Int64
    public var updatedAtMillis: Int64
    /// Whose delivery `state` and the fields after it describe.
    public var sink: String

    public init(sequence: Int64, idempotencyKey: String, type: String, personId: String, body: [UInt8],
                state: OutboxState, attempts: Int, nextAttemptMillis: Int64, lastStatus: Int?,
                lastError: String?, createdAtMillis: Int64, updatedAtMillis: Int64, sink: String = Store.serverSink) {
        self.sequence = sequence
        self.idempotencyKey = idempotencyKey
        self.type = type
        self.personId = personId
        self.body = body
        self.state = state
        self.attempts = attempts
        self.nextAttemptMillis = nextAttemptMillis
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAtMillis = createdAtMillis
        self.updatedAtMillis = updatedAtMillis
        self.sink = sink
    }
}

/// The outbox in numbers, for `outbox status`, `STATUS=` and the amber LED: one sink's
/// (`Store.status(sink:nowMillis:)`), or the whole outbox's (`Store.status(nowMillis:)`,
/// `sink` nil: see there how the sinks' figures combine).
public struct OutboxStatus: Hashable, Sendable {
    /// The sink these figures are of; nil for the whole outbox.
    public var sink: String?
    public var pending: Int
    public var sent: Int
    public var rejected: Int
    public var dead: Int
    /// Age of the oldest pending event; `nil` when none is pending.
    public var oldestPendingAgeMillis: Int64?
    public var lastSuccessMillis: Int64?
    public var lastErrorMillis: Int64?
    public var lastErrorClass: DeliveryErrorClass?
    public var lastError: String?
    /// The highest sequence ever allocated (0 before the first event).
    public var lastSequence: Int64
    /// The store's cap on undelivered events (`StoreConfiguration.maximumEvents`).
    public var maximumEvents: Int = .max

    public init(pending: Int, sent: Int, rejected: Int, dead: Int, oldestPendingAgeMillis: Int64?,
                lastSuccessMillis: Int64?, lastErrorMillis: Int64?, lastErrorClass: DeliveryErrorClass?,
                lastError: String?, lastSequence: Int64, maximumEvents: Int = .max, sink: String? = nil) {
        self.sink = sink
        self.pending = pending
        self.sent = sent
        self.rejected = rejected
        self.dead = dead
        self.oldestPendingAgeMillis = oldestPendingAgeMillis
        self.lastSuccessMillis = lastSuccessMillis
        self.lastErrorMillis = lastErrorMillis
        self.lastErrorClass = lastErrorClass
        self.lastError = lastError
        self.lastSequence = lastSequence
        self.maximumEvents = maximumEvents
    }

    /// Undelivered events (pending and dead letters) reached the cap: new events are
    /// refused until the sinks take the backlog (docs/event-api.md, "The cap").
    public var isFull: Bool { pending + dead >= maximumEvents }

    /// Events waiting to be delivered.
    public var backlog: Int { pending }
    /// Whether the last attempt failed after the last success: the server is unreachable
    /// or refusing.
    public var isFailing: Bool {
        guard let lastErrorMillis else { return false }
        return lastErrorMillis >= (lastSuccessMillis ?? Int64.min)
    }
}

/// How one delivery attempt ended, in the HTTP server's terms (SPEC §7), as recorded by
/// `Store.record(_:sink:atMillis:)`: its answer's status is kept with the outcome.
public enum DeliveryRecord: Hashable, Sendable {
    /// 201 or 200.
    case sent(sequence: Int64, status: Int)
    /// 409: refused by policy, kept for the record, never retried.
    case rejected(sequence: Int64, status: Int)
    /// Another 4xx: a dead letter until `outbox retry-dead`.
    case dead(sequence: Int64, status: Int, error: String)
    case retry(sequence: Int64, atMillis: Int64, errorClass: DeliveryErrorClass, error: String)
}

/// How one delivery attempt of a sink ended, in any sink's terms, as recorded by
/// `Store.record(_:sink:atMillis:)` (docs/event-api.md, "Sinks").
public enum SinkOutcome: Hashable, Sendable {
    /// The sink has the event (the broker's PUBACK, the server's 201/200).
    case delivered(sequence: Int64)
    /// Not now: try again at `atMillis` (wall clock, kept for `outbox list`; the sink keeps
    /// its own wait on the monotonic clock). `errorClass` and `error` are its last error.
    case retry(sequence: Int64, atMillis: Int64, errorClass: DeliveryErrorClass, error: String)
    /// Refused for good: a dead letter of this sink, kept until `outbox retry-dead` or its
    /// retention, never retried by itself. `errorClass` is its last error's class.
    case refused(sequence: Int64, errorClass: DeliveryErrorClass, error: String)

}

/// One outcome as the store records it, whichever of the two enums said it.
struct RecordedOutcome {
    var sequence: Int64
    /// The final state; nil for a retry.
    var state: OutboxState?
    var status: Int?
    var error: String?
    var retryAtMillis: Int64 = 0
    /// What `sinks.last_error_class` becomes; nil for a success.
    var errorClass: DeliveryErrorClass?

    init(_ record: DeliveryRecord) {
        switch record {
        case let .sent(sequence, status):
            self.sequence = sequence
            state = .sent
            self.status = status
        case let .rejected(sequence, status):
            self.sequence = sequence
            state = .rejected
            self.status = status
            error = "HTTP \(status): refused by server policy"
            errorClass = .rejected
        case let .dead(sequence, status, error):
            self.sequence = sequence
            state = .dead
            self.status = status
            self.error = error
            errorClass = .client
        case let .retry(sequence, at, errorClass, error):
            self.sequence = sequence
            retryAtMillis = at
            self.error = error
            self.errorClass = errorClass
        }
    }

    init(_ outcome: SinkOutcome) {
        switch outcome {
        case let .delivered(sequence):
            self.init(sequence: sequence, state: .sent)
        case let .retry(sequence, at, errorClass, error):
            self.init(DeliveryRecord.retry(sequence: sequence, atMillis: at, errorClass: errorClass, error: error))
        case let .refused(sequence, errorClass, error):
            self.init(sequence: sequence, state: .dead, error: error, errorClass: errorClass)
        }
    }

    private init(sequence: Int64, state: OutboxState?, error: String? = nil, errorClass: DeliveryErrorClass? = nil) {
        self.sequence = sequence
        self.state = state
        self.error = error
        self.errorClass = errorClass
    }

    /// The text `sinks.last_error` keeps (version 1 kept `HTTP 409` for a rejection).
    var lastErrorText: String? {
        if state == .rejected, let status { return "HTTP \(status)" }
        return error
    }
}
