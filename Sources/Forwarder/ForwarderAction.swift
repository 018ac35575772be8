import EventLoop
import Store

/// What ``ForwarderMachine`` asks its driver to do, in order. An action that reads or
/// writes the store names the input that carries its result back (the driver feeds it
/// before performing the next action), so the driver never decides anything itself.
enum ForwarderAction {
    /// Read the outbox's pending events committed after `after` (all of them from 0),
    /// feeding each to `sawPending`, then `pendingRead()`; on a store error
    /// `storeReadFailed(_:at:)`.
    case readPending(after: Int64)
    /// Read these outbox rows, then `entriesRead(_:)` with each (nil when gone); on a
    /// store error `storeReadFailed(_:at:)`.
    case readEntries(sequences: [Int64])
    /// Start this POST (the driver adds the trusted CAs), then `started(transfer:entry:)`,
    /// or `startFailed(_:entry:)` when the HTTP layer refuses it.
    case send(TransferRequest, entry: OutboxEntry)
    /// Record these outcomes in one transaction, then `storeWrote()`, then
    /// `personFinished(_:nextHead:)` with each of `finishing`'s oldest pending event; on a
    /// store error `recordFailed(finishing:_:at:)`.
    case record([DeliveryRecord], finishing: [String], atMillis: Int64)
    /// Make every pending event due now in the store (what `outbox list` shows), then
    /// `storeWrote()`; on a store error `storeFailed(_:at:)`.
    case retryPendingNow(atMillis: Int64)
    /// Ask the store whether another process changed the outbox; if so
    /// `outboxChangedElsewhere()`; on a store error `storeFailed(_:at:)`.
    case checkForExternalChanges
    /// Replace the wake-up timer with one at `deadline` (monotonic) that calls `wakeFired()`.
    case armWake(at: Instant)
    /// Arm the poll timer, which calls `pollDue()`.
    case schedulePoll(after: Duration)
    /// Abandon every transfer and cancel both timers.
    case cancelAll
    /// At most this many connections to the server at once.
    case setMaxConnections(Int)
    /// Tell the owner (logs, counters) about a delivery, failure or recovery.
    case report(ForwarderEvent)
    /// Tell the owner an event was delivered, for the delivery latency metric (wall ms).
    case reportDelivered(createdAtMillis: Int64, deliveredAtMillis: Int64)
    /// Feed `pump(now:wallMillis:)` now: look for work, once what came before is done.
    case pump
}
