import EventLoop

/// Neighbouring doors (docs/neighbours.md): their sighting reports in, this door's out.
/// The decision itself is the presence engine's (`PresenceEngine+Neighbours`); here the
/// reports are verified, counted, made and signed.
extension DoorCore {
    /// `[site]` from now on (at start, and at a reload that changes it).
    mutating func configureNeighbours(_ setup: NeighbourSetup?, at now: Instant) {
        presence.configureNeighbours(setup, at: now)
        silentNeighboursLogged = []
        guard let setup else {
            sightingVerifier = nil
            nextSightingReport = nil
            checkinReportDue = nil
            return
        }
        sightingVerifier = SightingVerifier(keys: setup.keys, ownId: gateway.id, neighbours: setup.neighbours)
        nextSightingReport = now
    }

    /// The site bus went up or down (docs/neighbours.md, "Degraded, and saying so").
    public mutating func siteBus(up: Bool) {
        presence.neighbourBus(up: up)
    }

    /// A payload from the site bus's sightings (anyone's: this door's own come back too).
    /// Verified, then its sightings count for the persons it names; refusals are counted
    /// by reason, the first of each reason logged. Costs O(sightings in it); nothing waits.
    public mutating func neighbourSighting(_ payload: [UInt8], at now: Instant) -> [DoorAction] {
        guard let verifier = sightingVerifier else { return [] }
        let wallNow = presence.wallClock.wallMilliseconds(at: now)
        var actions: [DoorAction] = []
        switch verifier.verify(payload, wallNow: wallNow) {
        case let .failure(refusal):
            refused(refusal, into: &actions)
        case let .success(report):
            let age = Duration.milliseconds(wallNow &- report.wallMilliseconds)
            switch presence.neighbourReport(report, age: age, at: now) {
            case let .failure(refusal):
                refused(refusal, into: &actions)
            case let .success(events):
                sightings.taken &+= 1
                handle(events, at: now, into: &actions)
                if !events.isEmpty { actions.append(.armTimer(nextDeadline)) }
            }
        }
        return actions
    }

    mutating func refused(_ refusal: SightingRefusal, into actions: inout [DoorAction]) {
        sightings.refused[refusal, default: 0] &+= 1
        guard refusal != .ownReport, sightings.refused[refusal] == 1 else { return }
        actions.append(.log(DoorLogLine(.warning, "sighting refused (the first of its kind; all are counted)",
                                        ["reason": refusal.rawValue])))
    }

    /// This door's report, due once a second (`periodic`) and after a checkin here: every
    /// person heard above `exit_rssi` − 10 dB, or a heartbeat; split in parts of at most
    /// 512 sightings, each a millisecond later than the one before (a neighbour takes only
    /// newer reports). Neighbours that fell silent or came back are logged, once per change.
    mutating func reportSightings(at now: Instant, periodic: Bool, into actions: inout [DoorAction]) {
        guard let verifier = sightingVerifier else { return }
        if periodic { nextSightingReport = now + NeighbourSetup.reportPeriod }
        checkinReportDue = nil
        lastSightingReport = now
        // Later than the last report's (a neighbour takes only newer ones), also when a
        // report comes within the last one's millisecond (its parts) or the wall clock
        // stepped back by less than a report period. Stepped back further (NTP correcting a clock
        // that ran ahead), the report carries the clock: its neighbours take it again once
        // the clock has caught up, where a report kept ahead would be refused as `ahead`
        // as long.
        let clock = presence.wallClock.wallMilliseconds(at: now)
        let stepTolerated = NeighbourSetup.reportPeriod.nanosecondsClamped / 1_000_000
        let wall = lastSightingWall >= clock && lastSightingWall &- clock < stepTolerated ? lastSightingWall &+ 1 : clock
        let heard = presence.sightingsToReport(at: now)
        var part = 0
        repeat {
            let start = part * SightingReport.maximumSightings
            let slice = heard[min(start, heard.count) ..< min(start + SightingReport.maximumSightings, heard.count)]
            let report = SightingReport(sender: gateway.id, wallMilliseconds: wall &+ Int64(part), sightings: Array(slice))
            actions.append(.publishSightings(report.encoded(keys: verifier.keys)))
            sightings.published &+= 1
            part += 1
        } while part * SightingReport.maximumSightings < heard.count
        lastSightingWall = wall &+ Int64(part &- 1)
        for (id, silent) in presence.neighbourSilence(at: now) where silent != silentNeighboursLogged.contains(id) {
            if silent {
                silentNeighboursLogged.insert(id)
                actions.append(.log(DoorLogLine(.warning, "neighbour silent: deciding alone for it", ["neighbour": id])))
            } else {
                silentNeighboursLogged.remove(id)
                actions.append(.log(DoorLogLine(.notice, "neighbour heard again", ["neighbour": id])))
            }
        }
    }

    /// A checkin here is reported at once (at the next tick, `checkinReportGap` after the
    /// report before at the soonest), besides the reports once a second: the neighbour that
    /// held the person checks them out as moved when it hears of the checkin, and would
    /// otherwise wait up to a report period more (docs/neighbours.md, "Sighting reports").
    mutating func reportCheckinSoon(at now: Instant) {
        guard sightingVerifier != nil else { return }
        let soonest = lastSightingReport.map { max(now, $0 + NeighbourSetup.checkinReportGap) } ?? now
        checkinReportDue = min(checkinReportDue ?? soonest, soonest)
    }
}

/// What came and went of sighting reports (docs/neighbours.md, the metrics' figures).
public struct SightingCounters: Hashable, Sendable {
    /// Reports this door asked to publish.
    public var published = 0
    /// Neighbours' reports taken.
    public var taken = 0
    /// Reports refused, by reason (this door's own, back from the bus, as `.ownReport`).
    public var refused: [SightingRefusal: Int] = [:]

    public init() {}
}
