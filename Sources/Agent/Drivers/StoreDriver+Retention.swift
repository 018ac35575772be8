import EventLoop
import Store

/// Retention (docs/event-api.md, "Retention"): the outbox is pruned, with or without a
/// server, in batches on the `RetentionSchedule`.
extension StoreDriver {
    var retentionPolicy: RetentionPolicy { .forDoor(hasSinks: hooks.hasSinks()) }

    func startRetention() {
        retentionTimer.arm(at: retention.next)
    }

    func retentionDue() {
        guard let store, health.trouble == nil else {
            // Nothing to prune without a store that takes writes; tried again later.
            _ = retention.batchFinished(pruned: nil, more: false, at: loop.now)
            retentionTimer.arm(at: retention.next)
            return
        }
        let outcome: RetentionSchedule.Outcome
        do {
            let (pruned, more) = try store.pruneBatch(nowMillis: loop.wallMilliseconds, policy: retentionPolicy)
            outcome = retention.batchFinished(pruned: pruned, more: more, at: loop.now)
        } catch {
            outcome = retention.batchFinished(pruned: nil, more: false, at: loop.now)
            log.log(.warning, "outbox retention failed; tried again in an hour", ["error": error.description])
            // A damaged file found by retention's reads: the same policy as any other path's
            // (examined, then kept or moved aside with a salvage).
            if error.trouble == .corrupt { failed(error) }
        }
        if case let .finished(pruned) = outcome, pruned.total > 0 {
            try? store.releaseFreePages()
            log.log(.info, "outbox retention", [
                "sent": "\(pruned.sent)", "rejected": "\(pruned.rejected)", "dead": "\(pruned.dead)",
                "unsent": "\(pruned.unsent)",
            ])
        }
        retentionTimer.arm(at: retention.next)
    }
}
