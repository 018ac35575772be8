import JSONText

/// What `beacon-gateway status` shows (see docs/fleet.md): the snapshot's state, each
/// person with an open visit and the last events, as JSON or as lines for a person.
public struct StatusReport: Hashable, Sendable {
    public var snapshot: FleetSnapshot
    public var visits: [OpenVisitSnapshot]
    public var recentEvents: [RecentEvent]

    public init(snapshot: FleetSnapshot, visits: [OpenVisitSnapshot], recentEvents: [RecentEvent]) {
        self.snapshot = snapshot
        self.visits = visits
        self.recentEvents = recentEvents
    }

    public func json() -> String {
        let s = snapshot
        var json = JSONWriter()
        json.beginObject()
        json.key("gatewayId"); json.string(s.gatewayId)
        json.key("version"); json.string(s.version)
        json.key("startedAt"); json.string(HeartbeatBody.timestamp(s.startedAtMillis))
        json.key("now"); json.string(HeartbeatBody.timestamp(s.nowMillis))
        json.key("uptimeS"); json.number(s.uptimeSeconds)
        json.key("clockSynced"); json.bool(s.clockSynced)
        json.key("mode"); json.string(s.mode.rawValue)
        json.key("controller"); HeartbeatBody.controller(s.controller, into: &json)
        json.key("scanning"); json.bool(s.scanning)
        json.key("present"); json.number(visits.count)
        json.key("persons")
        json.beginArray()
        for visit in visits {
            json.beginObject()
            json.key("id"); json.string(visit.personId)
            json.key("state"); json.string(visit.state)
            json.key("since"); json.string(visit.sinceMillis.map(HeartbeatBody.timestamp))
            json.key("rssi"); json.number(visit.rssi)
            json.key("tag"); json.string(visit.tag)
            json.key("proven"); json.bool(visit.proven)
            json.endObject()
        }
        json.endArray()
        json.key("outbox")
        json.beginObject()
        json.key("pending"); json.number(s.outbox.pending)
        json.key("dead"); json.number(s.outbox.dead)
        json.key("rejected"); json.number(s.outbox.rejected)
        json.key("oldestPendingS"); json.number(Int(s.outbox.oldestPendingSeconds.rounded(.down)))
        json.endObject()
        json.key("sinks"); HeartbeatBody.sinks(s.sinks, into: &json)
        json.key("lastEvents")
        json.beginArray()
        for event in recentEvents {
            json.beginObject()
            json.key("sequence"); json.number(Int(event.sequence))
            json.key("type"); json.string(event.type)
            json.key("userId"); json.string(event.personId)
            json.key("at"); json.string(HeartbeatBody.timestamp(event.atMillis))
            json.endObject()
        }
        json.endArray()
        json.key("roster"); HeartbeatBody.roster(s.roster, into: &json)
        if let bus = s.bus {
            json.key("bus")
            json.beginObject()
            json.key("state"); json.string(bus.state)
            json.key("error"); json.string(bus.error)
            json.key("eventsDelivered"); json.number(Int(clamping: bus.eventsDelivered))
            json.endObject()
        }
        if let neighbours = s.neighbours {
            json.key("neighbours")
            json.beginObject()
            json.key("configured"); json.number(neighbours.configured)
            json.key("heard"); json.number(neighbours.heard)
            json.key("anyDoor"); json.bool(neighbours.anyDoor)
            json.key("doors")
            json.beginArray()
            for door in neighbours.doors {
                json.beginObject()
                json.key("id"); json.string(door.id)
                json.key("heard"); json.bool(door.heard)
                json.key("lastHeardS")
                if let ago = door.heardAgoSeconds { json.number(ago) } else { json.null() }
                json.endObject()
            }
            json.endArray()
            json.endObject()
        }
        json.endObject()
        return json.text + "\n"
    }

    public func text() -> String {
        let s = snapshot
        let c = s.controller
        var lines = [
            "gateway     \(s.gatewayId) (version \(s.version), up \(s.uptimeSeconds) s)",
            "controller  \(c.state.rawValue)\(c.address.map { " \($0)" } ?? "")\(c.family.map { " (\($0))" } ?? ""), resets \(c.resets)",
            "scanning    \(s.scanning ? "yes" : "no")",
            "mode        \(s.mode.rawValue)",
            "clock       \(s.clockSynced ? "synchronised" : "NOT synchronised")",
            "roster      \(s.roster.source)\(s.roster.revision.map { " \($0)" } ?? ""), \(s.roster.persons) persons\(s.roster.error.map { " (error: \($0))" } ?? "")",
            "outbox      \(s.outbox.pending) pending, \(s.outbox.dead) dead, \(s.outbox.rejected) rejected",
        ]
        for sink in s.sinks {
            let failing = sink.lastErrorMillis.map { " · failing at \(HeartbeatBody.timestamp($0)): \(sink.lastErrorClass ?? "?")" } ?? ""
            lines.append("  \(sink.name)  \(sink.pending) pending, \(sink.dead) dead, \(sink.rejected) rejected\(failing)")
        }
        if let bus = s.bus {
            lines.append("site bus    \(bus.state)\(bus.error.map { " (\($0))" } ?? ""), \(bus.eventsDelivered) events delivered")
        }
        if let neighbours = s.neighbours {
            lines += Self.neighbourLines(neighbours)
        }
        lines.append("present     \(visits.count)")
        for visit in visits {
            let since = visit.sinceMillis.map(HeartbeatBody.timestamp) ?? "-"
            let rssi = visit.rssi.map { "\($0) dBm" } ?? "-"
            lines.append("  \(visit.personId)  \(visit.state)  since \(since)  rssi \(rssi)  tag \(visit.tag ?? "-")\(visit.proven ? "  proven" : "")")
        }
        lines.append("last events \(recentEvents.count)")
        for event in recentEvents {
            lines.append("  #\(event.sequence)  \(event.type)  \(event.personId)  \(HeartbeatBody.timestamp(event.atMillis))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `neighbours  1 of 2 heard`, then a line per neighbour: heard (how long ago) or
    /// silent, the door deciding alone for it (docs/neighbours.md).
    static func neighbourLines(_ neighbours: NeighboursSnapshot) -> [String] {
        let seen = neighbours.anyDoor ? " (\"*\": the doors seen on the bus)" : ""
        var lines = ["neighbours  \(neighbours.heard) of \(neighbours.configured) heard\(seen)"]
        for door in neighbours.doors {
            let ago = door.heardAgoSeconds.map { "last heard \(Self.seconds($0)) ago" } ?? "never heard"
            lines.append("  \(door.id)  " + (door.heard ? "heard, \(ago)" : "SILENT, deciding alone for it (\(ago))"))
        }
        return lines
    }

    static func seconds(_ value: Double) -> String {
        value < 10 ? "\((value * 10).rounded(.down) / 10) s" : "\(Int(value)) s"
    }
}
