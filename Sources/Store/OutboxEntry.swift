/// One event as the outbox holds it.
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

    public init(sequence: Int64, idempotencyKey: String, type: String, personId: String, body: [UInt8],
                state: OutboxState, attempts: Int, nextAttemptMillis: Int64, lastStatus: Int?,
                lastError: String?, createdAtMillis: Int64, updatedAtMillis: Int64) {
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
    }
}

/// The outbox in numbers, for `outbox status`, `STATUS=` and the amber LED.
public struct OutboxStatus: Hashable, Sendable {
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
                lastError: String?, lastSequence: Int64, maximumEvents: Int = .max) {
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
    /// refused until the server takes the backlog.
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

/// How one delivery attempt ended, as recorded by `Store.record(_:atMillis:)`.
public enum DeliveryRecord: Hashable, Sendable {
    case sent(sequence: Int64, status: Int)
    case rejected(sequence: Int64, status: Int)
    case dead(sequence: Int64, status: Int, error: String)
    case retry(sequence: Int64, atMillis: Int64, errorClass: DeliveryErrorClass, error: String)
}
