import Config
import EventLoop
import Fleet
import Forwarder
import GatewayCore
import LEDs
import Store

/// What the drivers read when they need it: the snapshot behind the heartbeat, `/metrics`
/// and `status` (FleetDriver, see docs/fleet.md) and the status line's figures
/// (IndicatorsDriver); built only when one of them asks.
extension GatewayAgent {
    // MARK: Snapshots

    func fleetSnapshot() -> FleetSnapshot {
        let now = loop.now
        let wall = loop.wallMilliseconds
        var outbox = OutboxSnapshot()
        if let store, let status = try? store.status(nowMillis: wall) {
            outbox = OutboxSnapshot(pending: status.pending, dead: status.dead, rejected: status.rejected,
                                    oldestPendingSeconds: Double(status.oldestPendingAgeMillis ?? 0) / 1000)
        }
        let uptime = now - fleet.startedAt
        var snapshot = FleetSnapshot(
            gatewayId: configuration.gateway.id, siteId: configuration.gateway.site, doorId: configuration.gateway.door,
            version: options.appVersion, startedAtMillis: fleet.startedAtMillis, nowMillis: wall,
            uptimeSeconds: Int(uptime.components.seconds), clockSynced: clockSynchronisedNow(),
            mode: fleet.mode, controller: fleet.controller(link?.host.state, info: link?.host.controllerInfo),
            scanning: link?.host.isControllerAnswering ?? false, present: presence.openVisits,
            reportsPerSecond: fleet.measureRate(at: now), outbox: outbox, roster: rosterStatus(),
            lastEventAtMillis: fleet.lastEventAtMillis, counters: fleet.counters,
            process: ProcessMetrics.read(startTimeSeconds: Double(fleet.startedAtMillis) / 1000)
        )
        snapshot.bus = fleet.siteBus
        snapshot.neighbours = neighboursSnapshot(at: now, bus: fleet.siteBus)
        snapshot.sinks = delivery.sinkStatuses().map(SinkSnapshot.init)
        return snapshot
    }

    /// The neighbouring doors (docs/neighbours.md): the door core's view of each, and the
    /// sighting reports' figures, in from the core and the bus, out from the bus.
    func neighboursSnapshot(at now: Instant, bus: BusSnapshot?) -> NeighboursSnapshot? {
        guard let status = core.neighbourStatus(at: now) else { return nil }
        let doors = status.doors.map { door in
            NeighboursSnapshot.Door(id: door.id, heardAgoSeconds: door.heardAgo.map { Double($0.nanosecondsClamped) / 1e9 },
                                    heard: door.heard)
        }
        let counters = core.sightings
        var incoming: [String: UInt64] = ["accepted": UInt64(counters.taken), "oversized": bus?.sightingsOversized ?? 0]
        for (refusal, count) in counters.refused { incoming[refusal.rawValue, default: 0] &+= UInt64(count) }
        let outgoing: [String: UInt64] = [
            "published": bus?.published[.init(topicKind: "sightings", result: "accepted")] ?? 0,
            "refused": bus?.published[.init(topicKind: "sightings", result: "refused")] ?? 0,
            "not_sent": bus?.sightingsNotSent ?? 0,
        ]
        return NeighboursSnapshot(anyDoor: status.anyDoor, doors: doors, sightingsIn: incoming, sightingsOut: outgoing)
    }

    /// Open visits by person: since when (wall clock) and the filtered RSSI.
    func openVisitsByPerson() -> [String: (sinceMillis: Int64, rssi: Int?)] {
        var visits: [String: (sinceMillis: Int64, rssi: Int?)] = [:]
        for visit in core.openVisits(at: loop.now) {
            visits[visit.personId] = (visit.visitStartWallMilliseconds ?? loop.wallMilliseconds, visit.filteredRSSI)
        }
        return visits
    }

    func statusReport() -> StatusReport {
        let snapshot = fleetSnapshot()
        let visits = core.openVisits(at: loop.now).map { visit in
            OpenVisitSnapshot(personId: visit.personId, state: "\(visit.state)", sinceMillis: visit.visitStartWallMilliseconds,
                              rssi: visit.filteredRSSI, tag: visit.tagId, proven: visit.proven)
        }
        return StatusReport(snapshot: snapshot, visits: visits, recentEvents: fleet.recentEvents)
    }

    // MARK: Status

    /// The status line's figures: the controller, the server's mode, presence, the
    /// outbox (and the amber LED from delivery), the disk and the clock.
    func statusFacts() -> IndicatorsDriver.StatusFacts {
        var backlog = 0
        var amber: LEDPatternEngine.OutboxState = .empty
        if let status = delivery.status() {
            backlog = status.backlog
            amber = status.amber.ledState
        } else if let store, let status = try? store.status(nowMillis: loop.wallMilliseconds) {
            backlog = status.backlog
        }
        return IndicatorsDriver.StatusFacts(
            scanning: link?.host.isControllerAnswering ?? false, paused: fleet.mode == .paused, present: presence.openVisits,
            backlog: backlog, outbox: amber, diskTrouble: storage.trouble.map { "\($0)" },
            clockSynchronised: clockSynchronisedNow()
        )
    }
}

extension SinkSnapshot {
    init(_ status: SinkStatus) {
        let outbox = status.outbox
        self.init(name: status.name, pending: outbox.pending, dead: outbox.dead, rejected: outbox.rejected,
                  oldestPendingSeconds: Double(outbox.oldestPendingAgeMillis ?? 0) / 1000,
                  lastSuccessMillis: outbox.lastSuccessMillis,
                  lastErrorMillis: outbox.isFailing ? outbox.lastErrorMillis : nil,
                  lastErrorClass: outbox.isFailing ? outbox.lastErrorClass?.rawValue : nil,
                  lastError: outbox.isFailing ? outbox.lastError : nil)
    }
}

extension AmberIndication {
    var ledState: LEDPatternEngine.OutboxState {
        switch self {
        case .off: .empty
        case .blink: .waiting
        case .steady: .refused
        }
    }
}
