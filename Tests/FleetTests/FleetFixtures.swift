@testable import Fleet

/// A snapshot with every field set to something recognisable.
func sampleSnapshot() -> FleetSnapshot {
    var counters = FleetCounters()
    counters.reports = 500
    counters.tagReports = 120
    counters.checkins = 3
    counters.checkouts = 2
    counters.deliveries.stored = 4
    counters.deliveries.duplicate = 1
    counters.deliveries.retry = 2
    counters.deliveryLatency.observe(seconds: 0.02)
    counters.deliveryLatency.observe(seconds: 3)
    counters.controllerResets = 1
    counters.proofsOK = 5
    counters.proofsFailed = 1
    return FleetSnapshot(
        gatewayId: "door-lab-301", siteId: "S_HQ", doorId: "lab-301", version: "1.2.0",
        startedAtMillis: 1_789_012_345_678, nowMillis: 1_789_012_345_678 + 3_600_000, uptimeSeconds: 3600,
        clockSynced: true, mode: .active,
        controller: ControllerSnapshot(state: .up, address: "B8:27:EB:00:00:01", family: "extended", resets: 1),
        scanning: true, present: 3, reportsPerSecond: 412.5,
        outbox: OutboxSnapshot(pending: 2, dead: 1, rejected: 0, oldestPendingSeconds: 7.9),
        roster: .file(persons: 120), lastEventAtMillis: 1_789_012_345_678 + 60_000, counters: counters,
        process: ProcessSnapshot(cpuSeconds: 1.25, residentBytes: 12_345_678, startTimeSeconds: 1_789_012_345.678)
    )
}
