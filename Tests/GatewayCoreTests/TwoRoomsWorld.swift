import AttendanceEvents
import EventLoop
import Glibc
@testable import HCI
import PresenceProof
import SplitMix
@testable import GatewayCore

/// Two neighbouring doors in virtual time (docs/neighbours.md, "Proof on virtual time"):
/// room A (x 1…6 m) and room B (x 6…11 m) side by side, a drywall between them at
/// x = 6, a corridor along their fronts (y −2…0), each door's gateway just inside its
/// doorway, 2.4 m apart. People sit, walk along the corridor and move between rooms; each
/// door hears them with a log-distance path loss, the walls' loss, a slow fading of its
/// own per person (an Ornstein–Uhlenbeck process) and a fast one per advertisement. The
/// doors share sighting reports over an in-memory bus that delays each by up to 1 s (in
/// order per sender). Door B can die and come back (a new core from its store).
struct TwoRoomsWorld {
    enum Region: UInt8 { case roomA = 0, roomB = 1, corridor = 2, away = 3 }

    struct Point { var x: Double; var y: Double }

    /// What a person does next.
    enum Step {
        case sit(Point, seconds: Double)
        case walk(to: Point)
        case away(seconds: Double)
    }

    struct Radio {
        var txAt1m = -59.0
        var exponent = 2.2
        var wallDB = 6.0
        var slowSigma = 2.0
        var slowTau = 30.0
        var fastSigma = 3.0
        var deepFadeChance = 0.05
        var deepFadeDB = 10.0
        var lossChance = 0.1
        var sensitivity = -95.0
        var advertisingInterval = 0.7
    }

    static let gatewayA = Point(x: 4.8, y: 0.3), gatewayB = Point(x: 7.2, y: 0.3)
    static let wallX = 6.0
    static let awayPoint = Point(x: -40, y: -1)

    static func region(_ p: Point) -> Region {
        if p.x < -5 || p.x > 17 { return .away }
        if p.y <= 0 { return .corridor }
        return p.x < wallX ? .roomA : .roomB
    }

    struct Person {
        var plan: [Step]
        var nextStep = 0
        var position: Point
        var waypoints: [Point] = []
        var busyUntil = 0.0
        var nextAdvert: Double
        var slow = [0.0, 0.0]
    }

    var radio = Radio()
    var random: SplitMix64
    /// The bus's delays draw from a seed of their own, per door and step: how many reports
    /// the doors make (which the rule decides) changes neither the radio's draws nor the
    /// delays of the other reports, so two rules are compared on the same world.
    let busSeed: UInt64
    var persons: [Person] = []
    var doors: [DoorHarness]
    var setups: [DoorSetup]
    var alive = [true, true]
    /// Sim seconds since the start.
    var time = 0.0
    let step = 0.1
    let start: Instant
    let wallStart: Int64
    /// Door B's wall clock runs this far ahead of A's (ms): the doors' clocks differ a little.
    let skewB: Int64 = 40
    var bus: [[(at: Double, payload: [UInt8])]] = [[], []]
    var lastDelivery = [0.0, 0.0]
    var maximumBusDelay = 1.0

    /// Per step, per person: the region, and per door whether the visit is open there.
    var regions: [[UInt8]] = []
    var openAt: [[[Bool]]] = [[], []]
    var aliveAt: [[Bool]] = [[], []]
    /// Every committed event of each door, with the sim time its decision was taken.
    var eventsSeen = [0, 0]
    var decided: [[(time: Double, event: AttendanceEvent)]] = [[], []]
    var longestDoubleVisit = 0.0
    var longestDoubleVisitWhere = ""
    var doubleVisitSince: [Double?] = []
    /// Per step, per person in a room: how much more strongly that room's door hears them
    /// than the other door without the report's noise (path, walls and the slow fading
    /// only, which no filter of seconds can remove): what the rule could know at best.
    var meanLeads: [[Float]] = []
    /// Per step, per person in a room: what its door hears of them on average.
    var meanOwn: [[Float]] = []
    /// The doors' `enter_rssi`, for the same rule on `meanOwn`.
    var enterRSSI = -78.0
    /// The doors' `margin_db`, for the same rule on `meanLeads` (`Figures.reference…`).
    var marginDB = 6.0

    /// `wallDB`: the loss of the wall between the rooms and of the corridor's front wall.
    init(seed: UInt64, persons plans: [[Step]], setups: [DoorSetup], wallDB: Double = 6) {
        random = SplitMix64(seed: seed)
        busSeed = seed ^ 0xB0_5B_05
        radio.wallDB = wallDB
        start = Instant(nanoseconds: 1_000_000_000)
        wallStart = DoorHarness.anchorWall
        self.setups = setups
        doors = [DoorHarness(setups[0], now: start, wall: wallStart), DoorHarness(setups[1], now: start, wall: wallStart + skewB)]
        for plan in plans {
            persons.append(Person(plan: plan, position: Self.awayPoint, nextAdvert: random.unit() * radio.advertisingInterval))
        }
        regions = Array(repeating: [], count: plans.count)
        openAt = [Array(repeating: [], count: plans.count), Array(repeating: [], count: plans.count)]
        aliveAt = [[], []]
        doubleVisitSince = Array(repeating: nil, count: plans.count)
        meanLeads = Array(repeating: [], count: plans.count)
        meanOwn = Array(repeating: [], count: plans.count)
    }

    // MARK: Running

    mutating func run(seconds: Double, killB: ClosedRange<Double>? = nil) {
        let steps = Int((seconds / step).rounded())
        for _ in 0 ..< steps {
            if let killB {
                if alive[1], time >= killB.lowerBound, time < killB.upperBound { alive[1] = false; bus[1] = []; bus[0] = [] }
                if !alive[1], time >= killB.upperBound { restartB() }
            }
            deliver()
            hearAdvertisements()
            time += step
            for door in 0 ..< 2 where alive[door] {
                doors[door].advance(by: .milliseconds(Int64((step * 1000).rounded())))
                collect(door)
            }
            move()
            record()
        }
    }

    mutating func restartB() {
        alive[1] = true
        let old = doors[1]
        doors[1] = DoorHarness(setups[1], stored: old.store.records, store: old.store,
                               now: start + .milliseconds(Int64((time * 1000).rounded())), wall: wall(time, door: 1))
        doors[1].published = []
        doors[1].publishedAt = []
        eventsSeen[1] = doors[1].store.events.count
    }

    func wall(_ time: Double, door: Int) -> Int64 {
        wallStart + Int64((time * 1000).rounded()) + (door == 1 ? skewB : 0)
    }

    /// Reports due by now reach the other door (not a dead one, nor from one).
    mutating func deliver() {
        for target in 0 ..< 2 {
            let source = 1 - target
            while let first = bus[source].first, first.at <= time {
                bus[source].removeFirst()
                guard alive[target] else { continue }
                doors[target].perform(doors[target].core.neighbourSighting(first.payload, at: doors[target].now))
            }
        }
    }

    /// What the door published this step goes on the bus, each delayed by up to 1 s, in order.
    mutating func collect(_ door: Int) {
        for payload in doors[door].published {
            // Drawn per door and step, not per report: how many reports the doors make
            // (which the rule decides) does not change the delays of the others.
            var draw = SplitMix64(seed: busSeed ^ UInt64(door) << 40 ^ UInt64((time / step).rounded()))
            let at = max(time + draw.unit() * maximumBusDelay, lastDelivery[door])
            lastDelivery[door] = at
            bus[door].append((at, payload))
        }
        doors[door].published = []
        doors[door].publishedAt = []
        let events = doors[door].store.events
        for event in events[eventsSeen[door]...] {
            decided[door].append((time, event))
        }
        eventsSeen[door] = events.count
    }

    mutating func hearAdvertisements() {
        var heard: [[(Int, Int)]] = [[], []]
        for n in persons.indices {
            guard persons[n].nextAdvert <= time else { continue }
            persons[n].nextAdvert += radio.advertisingInterval + (random.unit() - 0.5) * 0.02
            for door in 0 ..< 2 where alive[door] {
                if let rssi = rssi(of: n, at: door) { heard[door].append((n, rssi)) }
            }
        }
        for door in 0 ..< 2 where alive[door] && !heard[door].isEmpty {
            doors[door].hear(reports: heard[door])
        }
    }

    /// What `door` hears of person `n` on average: no report noise, the slow fading kept.
    func meanRSSI(of n: Int, at door: Int) -> Double {
        let p = persons[n].position
        let gateway = door == 0 ? Self.gatewayA : Self.gatewayB
        let distance = max(((p.x - gateway.x) * (p.x - gateway.x) + (p.y - gateway.y) * (p.y - gateway.y)).squareRoot(), 0.5)
        return radio.txAt1m - 10 * radio.exponent * log10(distance) - wallLoss(p, door: door) + persons[n].slow[door]
    }

    mutating func rssi(of n: Int, at door: Int) -> Int? {
        let p = persons[n].position
        guard Self.region(p) != .away else { return nil }
        guard random.unit() >= radio.lossChance else { return nil }
        let gateway = door == 0 ? Self.gatewayA : Self.gatewayB
        let distance = max(((p.x - gateway.x) * (p.x - gateway.x) + (p.y - gateway.y) * (p.y - gateway.y)).squareRoot(), 0.5)
        var value = radio.txAt1m - 10 * radio.exponent * log10(distance)
        value -= wallLoss(p, door: door)
        value += persons[n].slow[door]
        value += gaussian() * radio.fastSigma
        if random.unit() < radio.deepFadeChance { value -= radio.deepFadeDB }
        guard value >= radio.sensitivity else { return nil }
        return Int(value.rounded())
    }

    func wallLoss(_ p: Point, door: Int) -> Double {
        switch Self.region(p) {
        case .roomA: door == 0 ? 0 : radio.wallDB
        case .roomB: door == 1 ? 0 : radio.wallDB
        // The front wall, except in front of the door's own doorway.
        case .corridor: abs(p.x - (door == 0 ? Self.gatewayA.x : Self.gatewayB.x)) <= 0.6 ? 0 : radio.wallDB
        case .away: 100
        }
    }

    mutating func gaussian() -> Double {
        let u1 = max(random.unit(), 1e-12), u2 = random.unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// Plans, walking and the slow fading.
    mutating func move() {
        let decay = exp(-step / radio.slowTau)
        let kick = radio.slowSigma * (1 - decay * decay).squareRoot()
        for n in persons.indices {
            for door in 0 ..< 2 { persons[n].slow[door] = persons[n].slow[door] * decay + kick * gaussian() }
            if !persons[n].waypoints.isEmpty {
                var budget = 1.2 * step
                while budget > 0, let target = persons[n].waypoints.first {
                    let dx = target.x - persons[n].position.x, dy = target.y - persons[n].position.y
                    let length = (dx * dx + dy * dy).squareRoot()
                    if length <= budget {
                        persons[n].position = target
                        persons[n].waypoints.removeFirst()
                        budget -= length
                    } else {
                        persons[n].position.x += dx / length * budget
                        persons[n].position.y += dy / length * budget
                        budget = 0
                    }
                }
                continue
            }
            guard time >= persons[n].busyUntil else { continue }
            let plan = persons[n].plan
            guard !plan.isEmpty else { continue }
            let next = plan[persons[n].nextStep % plan.count]
            persons[n].nextStep += 1
            switch next {
            case let .sit(point, seconds):
                persons[n].waypoints = Self.route(from: persons[n].position, to: point)
                persons[n].busyUntil = time + Double(persons[n].waypoints.count) * 0 + seconds
                persons[n].busyUntil += Self.routeLength(from: persons[n].position, waypoints: persons[n].waypoints) / 1.2
            case let .walk(to):
                persons[n].waypoints = Self.route(from: persons[n].position, to: to)
            case let .away(seconds):
                persons[n].waypoints = Self.route(from: persons[n].position, to: Self.awayPoint)
                persons[n].busyUntil = time + seconds
                persons[n].busyUntil += Self.routeLength(from: persons[n].position, waypoints: persons[n].waypoints) / 1.2
            }
        }
    }

    static func doorway(of region: Region) -> Double? {
        switch region {
        case .roomA: gatewayA.x
        case .roomB: gatewayB.x
        default: nil
        }
    }

    /// Out through the own doorway, along the corridor, in through the other.
    static func route(from: Point, to: Point) -> [Point] {
        let fromRegion = region(from), toRegion = region(to)
        var points: [Point] = []
        if fromRegion != toRegion || fromRegion == .corridor || fromRegion == .away {
            if let x = doorway(of: fromRegion) { points += [Point(x: x, y: 0.5), Point(x: x, y: -1)] }
            if fromRegion == .away { points.append(Point(x: -5, y: -1)) }
            if toRegion == .away { points.append(Point(x: -5, y: -1)) }
            if let x = doorway(of: toRegion) { points += [Point(x: x, y: -1), Point(x: x, y: 0.5)] }
        }
        points.append(to)
        return points
    }

    static func routeLength(from: Point, waypoints: [Point]) -> Double {
        var length = 0.0, previous = from
        for point in waypoints {
            length += ((point.x - previous.x) * (point.x - previous.x) + (point.y - previous.y) * (point.y - previous.y)).squareRoot()
            previous = point
        }
        return length
    }

    mutating func record() {
        for n in persons.indices {
            let region = Self.region(persons[n].position)
            regions[n].append(region.rawValue)
            let own = region == .roomA ? 0 : 1
            meanLeads[n].append(region.rawValue <= 1 ? Float(meanRSSI(of: n, at: own) - meanRSSI(of: n, at: 1 - own)) : 0)
            meanOwn[n].append(region.rawValue <= 1 ? Float(meanRSSI(of: n, at: own)) : -127)
            var both = true
            for door in 0 ..< 2 {
                let open = alive[door] && (doors[door].state(n)?.hasOpenVisit ?? false)
                openAt[door][n].append(open)
                both = both && open
            }
            if both {
                let since = doubleVisitSince[n] ?? time
                doubleVisitSince[n] = since
                if time - since > longestDoubleVisit {
                    longestDoubleVisit = time - since
                    longestDoubleVisitWhere = "p\(n) from \(tenths(since)) s"
                }
            } else {
                doubleVisitSince[n] = nil
            }
        }
        for door in 0 ..< 2 { aliveAt[door].append(alive[door]) }
    }

    // MARK: Judging

    struct Figures: CustomStringConvertible {
        var checkins = 0
        var wrongDoorCheckins: [String] = []
        /// Checkins at A of people in room B while B was dead: by design (docs/neighbours.md).
        var aloneWrongDoorCheckins = 0
        var corridorCheckins = 0
        var moved = 0
        var stays = 0
        var missedStays: [String] = []
        var longestDoubleVisit = 0.0
        var longestDoubleVisitWhere = ""
        var simulatedHours = 0.0
        /// Per `moved` checkout of a person then in the new door's room: seconds from their
        /// entering that room (or from either door's coming back, if later) to the checkout
        /// at the old door.
        var handovers: [Double] = []
        /// `moved` checkouts of a person not in the new door's room at the time.
        var movedOutsideTheRoom = 0
        /// Per handover in `handovers`, the same latency of `referenceTaking` (infinity:
        /// never within the stay).
        var referenceHandovers: [Double] = []
        /// Per stay ≥ 10 s that its door had open: seconds from entering the room to the
        /// door's having the visit open (0: open as they came in, from a stay before). A
        /// missed stay is not in it (it is in `missedStays`), nor one opened only in the
        /// 3 s after: a rule that misses more stays can show quicker openings.
        var arrivals: [Double] = []
        /// Stays ≥ 10 s that `referenceTaking` misses too.
        var referenceMissedStays = 0
        /// Stays ≥ 10 s that `referenceWrongDoor` checks in at the other door.
        var referenceWrongDoorStays = 0

        /// The `q` quantile of `referenceHandovers`.
        func referenceHandover(_ q: Double) -> Double { Self.quantile(q, of: referenceHandovers) }

        /// The `q` quantile (0…1) of the handover latencies, nearest rank; 0 with none.
        func handover(_ q: Double) -> Double { Self.quantile(q, of: handovers) }

        /// The `q` quantile (0…1) of `values`, nearest rank; 0 with none.
        static func quantile(_ q: Double, of values: [Double]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(max(Int((q * Double(sorted.count)).rounded(.up)) - 1, 0), sorted.count - 1)]
        }

        var description: String {
            "\(tenths(simulatedHours)) h simulated: \(checkins) checkins, \(wrongDoorCheckins.count) at the wrong door "
                + "(\(aloneWrongDoorCheckins) more while the neighbour was dead), \(corridorCheckins) in the corridor, \(moved) moved, "
                + "\(stays) stays ≥ 10 s, \(missedStays.count) missed, longest double visit \(tenths(longestDoubleVisit)) s (\(longestDoubleVisitWhere)), "
                + "handover p50 \(tenths(handover(0.5))) s, p95 \(tenths(handover(0.95))) s, max \(tenths(handover(1))) s "
                + "(\(handovers.count) into the room, \(movedOutsideTheRoom) elsewhere); without the reports' noise: "
                + "\(referenceMissedStays) stays missed, \(referenceWrongDoorStays) checked in at the wrong door, handover p50 \(tenths(referenceHandover(0.5))) s, p95 \(tenths(referenceHandover(0.95))) s; "
                + "stays open at their door p50 \(tenths(Self.quantile(0.5, of: arrivals))) s, p95 \(tenths(Self.quantile(0.95, of: arrivals))) s after entering"
        }
    }

    /// The rule of docs/neighbours.md on the signal without the reports' noise
    /// (`meanLeads`, `meanOwn`): steps from `start` until the door of the person's room,
    /// hearing them above `enter_rssi`, has led by `marginDB` for `handover_s` (5 s) or been
    /// the stronger for 10 s, within `start ..< end`; nil when neither happens. No door can
    /// do better on that rule, since the slow fading is the channel's own: it shows how much
    /// of a delay or a miss is the radio's and how much the rule's.
    func referenceTaking(_ n: Int, from start: Int, to end: Int) -> Int? {
        referenceRule(n, from: start, to: end, otherDoor: false, strongerBefore: nil)
    }

    /// The rule on the mean signal at the door of the person's room or (`otherDoor`) at the
    /// other, which hears them at `meanOwn` − `meanLeads`: steps from `start` until that
    /// door has led by `marginDB` for `handover_s` or, before `strongerBefore` steps (nil:
    /// throughout), been the stronger for 10 s, each above `enter_rssi`; nil: neither.
    func referenceRule(_ n: Int, from start: Int, to end: Int, otherDoor: Bool, strongerBefore: Int?) -> Int? {
        let margin = Float(marginDB), enter = Float(enterRSSI)
        let handover = Int((5 / step).rounded()), strongest = Int((10 / step).rounded())
        var leading = 0, stronger = 0
        for index in start ..< end {
            let lead = otherDoor ? -meanLeads[n][index] : meanLeads[n][index]
            let heard = otherDoor ? meanOwn[n][index] + lead : meanOwn[n][index]
            let taken = index - start + 1
            leading = lead >= margin ? leading + 1 : 0
            stronger = lead > 0 && heard > enter && strongerBefore.map { taken < $0 } ?? true ? stronger + 1 : 0
            if heard > enter, leading >= handover || stronger >= strongest { return taken }
        }
        return nil
    }

    /// Whether the same rule on the signal without the reports' noise would check person
    /// `n`, in a room from `start ..< end`, in at the other door: that door, hearing them
    /// above `enter_rssi`, leads by `marginDB` for `handover_s` at any time of the stay, or
    /// is the stronger for 10 s before the room's door took them (`taken` steps from
    /// `start`, nil: never). A seat by a thin wall whose slow fading favours the other door
    /// for that long is such a stay: no door can tell it from a seat in that door's room.
    func referenceWrongDoor(_ n: Int, from start: Int, to end: Int, taken: Int?) -> Bool {
        referenceRule(n, from: start, to: end, otherDoor: true, strongerBefore: taken) != nil
    }

    func stepIndex(_ time: Double) -> Int { min(max(Int((time / step).rounded()) - 1, 0), regions.first.map { $0.count - 1 } ?? 0) }

    func figures() -> Figures {
        var figures = Figures()
        figures.simulatedHours = time / 3600
        figures.longestDoubleVisit = longestDoubleVisit
        figures.longestDoubleVisitWhere = longestDoubleVisitWhere
        for door in 0 ..< 2 {
            let room: Region = door == 0 ? .roomA : .roomB
            for (time, event) in decided[door] {
                if event.movedTo != nil, let n = Int(event.userId.dropFirst()) {
                    figures.moved += 1
                    // Back from the decision to when the person entered the new door's room
                    // (or either door came back, if later: a dead door decides nothing).
                    let newRoom = door == 0 ? Region.roomB.rawValue : Region.roomA.rawValue
                    var index = stepIndex(time)
                    if regions[n][index] == newRoom {
                        while index > 0, regions[n][index - 1] == newRoom, aliveAt[1 - door][index - 1], aliveAt[door][index - 1] {
                            index -= 1
                        }
                        figures.handovers.append(time - Double(index + 1) * step)
                        var end = index
                        while end < regions[n].count, regions[n][end] == newRoom { end += 1 }
                        figures.referenceHandovers.append(referenceTaking(n, from: index, to: end).map { Double($0) * step } ?? .infinity)
                    } else {
                        figures.movedOutsideTheRoom += 1
                    }
                }
                guard event.type == .checkin, let n = Int(event.userId.dropFirst()) else { continue }
                figures.checkins += 1
                let region = Region(rawValue: regions[n][stepIndex(time)])!
                if region == .corridor { figures.corridorCheckins += 1 }
                // At the wrong door: the person is in the other door's room (in the corridor,
                // or gone beyond its end, they are in neither).
                guard region == (door == 0 ? .roomB : .roomA) else { continue }
                let neighbourAlive = aliveAt[1 - door][stepIndex(time)] && aliveAt[1 - door][stepIndex(time - 10)]
                if neighbourAlive {
                    figures.wrongDoorCheckins.append("door \(door) checked in p\(n) in \(region) at \(tenths(time)) s")
                } else {
                    figures.aloneWrongDoorCheckins += 1
                }
            }
        }
        // A stay: ≥ 10 s in one room, its door alive throughout; missed when that door never
        // had the visit open during it (or within 3 s after).
        let minimum = Int(10 / step), after = Int(3 / step)
        for n in regions.indices {
            var index = 0
            while index < regions[n].count {
                let region = regions[n][index]
                var end = index
                while end < regions[n].count, regions[n][end] == region { end += 1 }
                if region <= 1, end - index >= minimum {
                    let door = Int(region)
                    if aliveAt[door][index ..< end].allSatisfy({ $0 }) {
                        figures.stays += 1
                        let reference = referenceTaking(n, from: index, to: end)
                        if reference == nil { figures.referenceMissedStays += 1 }
                        if referenceWrongDoor(n, from: index, to: end, taken: reference) { figures.referenceWrongDoorStays += 1 }
                        if let opened = openAt[door][n][index ..< end].firstIndex(of: true) {
                            figures.arrivals.append(Double(opened - index) * step)
                        }
                        if !openAt[door][n][index ..< min(end + after, regions[n].count)].contains(true) {
                            let without = reference.map { "taken after \(tenths(Double($0) * step)) s" } ?? "missed too"
                            figures.missedStays.append("p\(n) in \(Region(rawValue: region)!) \(Double(index) * step)…\(Double(end) * step) s "
                                + "(without the reports' noise: \(without))")
                        }
                    }
                }
                index = end
            }
        }
        return figures
    }
}

/// `x` with one decimal.
func tenths(_ x: Double) -> String { "\((x * 10).rounded() / 10)" }

extension DoorHarness {
    /// One batch of reports, each of its own person and RSSI.
    mutating func hear(reports: [(person: Int, rssi: Int)]) {
        perform(core.beginReports(at: now, clock: WallClockReading(wallMilliseconds: wall, synchronised: nil)))
        let data: [UInt8] = [0x02, 0x01, 0x06]
        for (n, rssi) in reports {
            let actions = data.withUnsafeBufferPointer { buffer in
                core.report(LEAdvertisingReportView(properties: [], dataStatus: .complete, addressType: .publicDevice,
                                                    address: Self.address(n), txPower: nil, rssi: Int8(clamping: rssi), data: buffer),
                            at: now)
            }
            if !actions.isEmpty { perform(actions) }
        }
        perform(core.endReports(at: now))
    }

    /// `persons` persons with neighbours: door `id`, its neighbour `neighbour`.
    static func neighbourSetup(persons: Int, id: String, neighbours: NeighbourList, settings: PresenceSettings,
                               marginDB: Double = 6, handover: Duration = .seconds(5)) -> DoorSetup {
        var setup = Self.setup(persons: persons, settings: settings)
        setup.gateway = GatewayIdentity(id: id)
        setup.neighbours = NeighbourSetup(neighbours: neighbours, marginDB: marginDB, handover: handover,
                                          keys: SightingKeys(masterKey: MasterKey(bytes: Array(repeating: 0x5A, count: 32))!))
        return setup
    }
}
