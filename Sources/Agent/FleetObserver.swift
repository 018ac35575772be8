import AttendanceEvents
import EventLoop
import Fleet
import Forwarder
import Host
import Store

/// What the agent keeps for the heartbeat, the metrics and `status` (see docs/fleet.md):
/// counters bumped as things happen (one increment each), the mode and roster status in
/// one place (the server roster sets them), and the last few events. The endpoints that
/// report them are FleetDriver's.
final class FleetObserver {
    // Single-threaded, never accessed overlapping: no runtime exclusivity check per report.
    @exclusivity(unchecked) var counters = FleetCounters()
    /// Checking people in or paused; only the server roster changes it.
    var mode: DoorMode = .active
    /// The file's persons; `rosterStatus()` reports the server roster instead while one is in force.
    var roster = RosterStatus.file(persons: 0)
    var lastEventAtMillis: Int64?
    /// The site bus's state and figures; nil without `[mqtt]`.
    var siteBus: BusSnapshot?
    private(set) var recentEvents: [RecentEvent] = []
    static let recentEventCount = 10
    var controllerWasUp = false
    /// The controller's identity as last read: still reported while it recovers.
    var lastControllerInfo: ControllerInfo?

    let startedAt: Instant
    let startedAtMillis: Int64
    /// For `reportsPerSecond`: the report count at the last rate measurement.
    private var rateAnchor: (at: Instant, reports: UInt64)
    private(set) var reportsPerSecond = 0.0
    static let rateWindow: Duration = .seconds(5)


    init(now: Instant, wallMilliseconds: Int64) {
        startedAt = now
        startedAtMillis = wallMilliseconds
        rateAnchor = (now, 0)
    }

    func eventCommitted(sequence: Int64, type: String, personId: String, atMillis: Int64) {
        counters.countEvent(type: type)
        lastEventAtMillis = atMillis
        if recentEvents.count == Self.recentEventCount { recentEvents.removeFirst() }
        recentEvents.append(RecentEvent(sequence: sequence, type: type, personId: personId, atMillis: atMillis))
    }

    func forwarderEvent(_ event: ForwarderEvent) {
        switch event {
        case let .delivered(_, _, status): counters.countDelivered(status: status)
        case .rejected: counters.deliveries.rejected &+= 1
        case .deadLetter: counters.deliveries.dead &+= 1
        case .retrying: counters.deliveries.retry &+= 1
        case .failing, .recovered, .storeFailed, .storeRecovered, .requestFailed: break
        }
    }

    func delivered(createdAtMillis: Int64, deliveredAtMillis: Int64) {
        // In floating point: a damaged row's creation time can be any 64-bit value, and
        // the difference of two such values overflows an integer.
        counters.deliveryLatency.observe(seconds: (Double(deliveredAtMillis) - Double(createdAtMillis)) / 1000)
    }

    /// Reports per second over at least the last `rateWindow` (since start at first).
    func measureRate(at now: Instant) -> Double {
        let elapsed = now - rateAnchor.at
        if elapsed >= Self.rateWindow || reportsPerSecond == 0 {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds > 0 {
                reportsPerSecond = Double(counters.reports &- rateAnchor.reports) / seconds
            }
            if elapsed >= Self.rateWindow { rateAnchor = (now, counters.reports) }
        }
        return reportsPerSecond
    }

    func controller(_ state: HostState?, info current: ControllerInfo?) -> ControllerSnapshot {
        if let current {
            lastControllerInfo = current
            controllerWasUp = true
        }
        let info = lastControllerInfo
        let fleetState: ControllerSnapshot.State
        switch state {
        case .scanning?: fleetState = .up
        case .recovering?, .initializing?: fleetState = controllerWasUp ? .recovering : .absent
        case .starting?, nil: fleetState = .absent
        }
        return ControllerSnapshot(
            state: fleetState, address: info?.address.description, family: info?.commandFamily.description,
            resets: Int(clamping: counters.controllerResets)
        )
    }
}

extension FleetCounters.CorruptionCounts {
    /// A database reported corrupt, as the store's recovery found it.
    mutating func count(_ recovery: CorruptionRecovery) {
        switch recovery {
        case .sound:
            sound &+= 1
        case let .movedAside(moved):
            movedAside &+= 1
            salvagedEvents &+= UInt64(moved.salvage.events)
            salvagedPresence &+= UInt64(moved.salvage.presence)
            unreadableStretches &+= UInt64(moved.salvage.unreadableStretches)
            if moved.salvage.unreadable { unreadableFiles &+= 1 }
        }
    }
}
