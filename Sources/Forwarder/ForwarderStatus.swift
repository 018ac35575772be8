import Store

/// What the amber LED shows about delivery (see docs/leds.md).
public enum AmberIndication: Hashable, Sendable {
    /// Outbox empty or draining, server reachable (or no server configured).
    case off
    /// Events waiting: the server is unreachable or we are retrying.
    case blink
    /// The server refuses the gateway (401/403), dead letters exist, or the outbox is full.
    case steady
}

/// Delivery in numbers, for the LEDs and systemd's `STATUS=`.
public struct ForwarderStatus: Hashable, Sendable {
    public var outbox: OutboxStatus
    public var inFlight: Int
    /// The last attempt was refused for our credentials (401/403) and nothing succeeded since.
    public var authRefused: Bool

    public var backlog: Int { outbox.backlog }
    public var oldestPendingAgeMillis: Int64? { outbox.oldestPendingAgeMillis }
    public var lastSuccessMillis: Int64? { outbox.lastSuccessMillis }
    public var lastErrorClass: DeliveryErrorClass? { outbox.isFailing ? outbox.lastErrorClass : nil }

    public var amber: AmberIndication {
        if authRefused || outbox.dead > 0 || outbox.isFull { return .steady }
        if outbox.pending > 0 && outbox.isFailing { return .blink }
        return .off
    }

    /// The outbox's part of systemd's one-line `STATUS=`: `outbox 0`,
    /// `outbox 42 (retrying: server)`, `outbox 3 (server refuses the token)`, `… · 2 dead`.
    public var summary: String {
        var text = "outbox \(outbox.backlog)"
        if authRefused {
            text += " (server refuses the token)"
        } else if outbox.isFull {
            text += " (full: new events refused)"
        } else if outbox.pending > 0, let errorClass = lastErrorClass {
            text += " (retrying: \(errorClass))"
        }
        if outbox.dead > 0 { text += " · \(outbox.dead) dead" }
        return text
    }

    public init(outbox: OutboxStatus, inFlight: Int, authRefused: Bool) {
        self.outbox = outbox
        self.inFlight = inFlight
        self.authRefused = authRefused
    }
}

/// Notable happenings of the forwarder, for the caller to log (this layer has no logger).
public enum ForwarderEvent: Hashable, Sendable {
    case delivered(sequence: Int64, key: String, status: Int)
    case rejected(sequence: Int64, key: String, status: Int)
    case deadLetter(sequence: Int64, key: String, status: Int)
    case retrying(sequence: Int64, key: String, errorClass: DeliveryErrorClass, message: String, delayMillis: Int64)
    /// The first failure after a success (or start): worth one loud line.
    case failing(errorClass: DeliveryErrorClass, message: String)
    /// The first success after failures.
    case recovered
    /// The store could not be read or written: the first failure of an outage.
    case storeFailed(StoreError)
    /// The store took a write again after `storeFailed`.
    case storeRecovered
    case requestFailed(ForwarderError)
}
