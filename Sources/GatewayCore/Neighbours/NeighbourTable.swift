/// What the neighbours said of each person (docs/neighbours.md): per person and
/// neighbour the strongest of its sightings of the last 3 s, its latest and when that was
/// made, whether it holds the visit and confirmed their passage through its doorway, and
/// per person a cached summary (the strongest fresh sighting, the strongest
/// latest one, and a neighbour holding the visit) so that a report of this door's radio
/// reads O(1), whatever the number of neighbours. Memory: persons × neighbours cells of 29
/// bytes, plus a few bytes per person and per neighbour.
///
/// Times are the door's own instants (nanoseconds): a sighting's is when its sender made
/// it, as this door's clock maps it (arrival minus the report's age).
struct NeighbourTable: Sendable {
    static let never = Int64.min
    /// Under `"*"`, doors beyond this many are refused (`tooManyNeighbours`).
    static let maximumNeighbours = 64

    let anyDoor: Bool
    private(set) var ids: [String] = []
    var indexById: [String: Int] = [:]
    /// Per neighbour: when its last report arrived (this door's instant), and that
    /// report's own wall-clock time (a replay is never newer).
    private(set) var lastHeard: [Int64] = []
    var lastReportWall: [Int64] = []
    /// Per neighbour: when its latest report was made (this door's instant). Its sightings
    /// in that report stand until a newer report or its silence (`counts`).
    private(set) var lastMade: [Int64] = []

    /// Cells, person-major, `stride` per person (grows as `"*"` learns doors).
    private(set) var stride = 0
    /// The strongest of the neighbour's recent sightings (docs/neighbours.md: over the
    /// last 3 s), made at `cellPeakTime`; `cellTime`: when its latest was made.
    var cellRSSI: [Int8] = []
    /// The neighbour's latest sighting.
    var cellLatest: [Int8] = []
    var cellHolds: [Bool] = []
    /// The neighbour's latest sighting said it confirmed the person's passage through its
    /// doorway.
    var cellDoorway: [Bool] = []
    var cellTime: [Int64] = []
    var cellPeakTime: [Int64] = []
    /// The strongest of its sightings made after the peak (`never`: none): the peak once
    /// the peak is 3 s older than the latest, so that the strongest of the last 3 s falls
    /// to the next strongest, not to whatever came last.
    var cellNextRSSI: [Int8] = []
    var cellNextTime: [Int64] = []

    /// Per person: the strongest sighting that was fresh when it was computed (−1: none),
    /// and the neighbour whose fresh sighting says it holds the visit (−1: none).
    var bestIndex: [Int16] = []
    var bestRSSI: [Int8] = []
    var bestTime: [Int64] = []
    var holderIndex: [Int16] = []
    var holderTime: [Int64] = []
    /// Per person: the strongest of the neighbours' latest fresh sightings (−1: none).
    var latestIndex: [Int16] = []
    var latestRSSI: [Int8] = []
    var latestTime: [Int64] = []

    let freshness: Int64
    let silence: Int64
    /// Whether the site bus is up (the agent says so; true for a core without a bus): a
    /// neighbour's latest report stands past its 3 s only while reports can arrive at all.
    var busUp = true
    /// The reports of more than 512 persons are made a millisecond apart: sightings made
    /// within this of a neighbour's latest report were in it.
    static let reportSpread: Int64 = 100_000_000

    init(neighbours: NeighbourList, persons: Int) {
        freshness = NeighbourSetup.freshness.nanosecondsClamped
        silence = NeighbourSetup.silence.nanosecondsClamped
        switch neighbours {
        case let .doors(list):
            anyDoor = false
            for id in list where indexById[id] == nil { add(id) }
        case .anyDoorOfSite:
            anyDoor = true
        }
        stride = ids.count
        layOut(persons: persons)
    }

    var personCount: Int { bestIndex.count }

    /// Every person's sightings forgotten (a new roster): they come again within a second.
    mutating func layOut(persons: Int) {
        cellRSSI = Array(repeating: 0, count: persons * stride)
        cellLatest = Array(repeating: 0, count: persons * stride)
        cellHolds = Array(repeating: false, count: persons * stride)
        cellDoorway = Array(repeating: false, count: persons * stride)
        cellTime = Array(repeating: Self.never, count: persons * stride)
        cellPeakTime = Array(repeating: Self.never, count: persons * stride)
        cellNextRSSI = Array(repeating: 0, count: persons * stride)
        cellNextTime = Array(repeating: Self.never, count: persons * stride)
        bestIndex = Array(repeating: -1, count: persons)
        bestRSSI = Array(repeating: 0, count: persons)
        bestTime = Array(repeating: Self.never, count: persons)
        holderIndex = Array(repeating: -1, count: persons)
        holderTime = Array(repeating: Self.never, count: persons)
        latestIndex = Array(repeating: -1, count: persons)
        latestRSSI = Array(repeating: 0, count: persons)
        latestTime = Array(repeating: Self.never, count: persons)
    }

    private mutating func add(_ id: String) {
        indexById[id] = ids.count
        ids.append(id)
        lastHeard.append(Self.never)
        lastReportWall.append(Int64.min)
        lastMade.append(Self.never)
    }

    /// A verified report from `sender`, made at wall time `wall`: its neighbour index, or
    /// why it is not taken (a replay, or one door too many under `"*"`).
    mutating func accept(sender: String, wall: Int64, made: Int64, at now: Int64) -> Result<Int, SightingRefusal> {
        var index = indexById[sender]
        if index == nil {
            guard anyDoor, ids.count < Self.maximumNeighbours else {
                return .failure(anyDoor ? .tooManyNeighbours : .notANeighbour)
            }
            add(sender)
            widen()
            index = ids.count - 1
        }
        let neighbour = index!
        guard wall > lastReportWall[neighbour] else { return .failure(.replayed) }
        lastReportWall[neighbour] = wall
        lastHeard[neighbour] = now
        lastMade[neighbour] = max(lastMade[neighbour], made)
        return .success(neighbour)
    }

    /// One more column per person (a door learnt under `"*"`): cells copied across.
    private mutating func widen() {
        let persons = personCount
        let newStride = ids.count
        var rssi = Array(repeating: Int8(0), count: persons * newStride)
        var latest = rssi
        var holds = Array(repeating: false, count: persons * newStride)
        var doorway = holds
        var time = Array(repeating: Self.never, count: persons * newStride)
        var peakTime = time
        var nextTime = time
        var nextRSSI = rssi
        for person in 0 ..< persons {
            for neighbour in 0 ..< stride {
                rssi[person * newStride + neighbour] = cellRSSI[person * stride + neighbour]
                latest[person * newStride + neighbour] = cellLatest[person * stride + neighbour]
                holds[person * newStride + neighbour] = cellHolds[person * stride + neighbour]
                doorway[person * newStride + neighbour] = cellDoorway[person * stride + neighbour]
                time[person * newStride + neighbour] = cellTime[person * stride + neighbour]
                peakTime[person * newStride + neighbour] = cellPeakTime[person * stride + neighbour]
                nextRSSI[person * newStride + neighbour] = cellNextRSSI[person * stride + neighbour]
                nextTime[person * newStride + neighbour] = cellNextTime[person * stride + neighbour]
            }
        }
        stride = newStride
        cellRSSI = rssi
        cellLatest = latest
        cellHolds = holds
        cellDoorway = doorway
        cellTime = time
        cellPeakTime = peakTime
        cellNextRSSI = nextRSSI
        cellNextTime = nextTime
    }

    /// Whether a sighting of `neighbour` made at `time` counts at `now`: made within the
    /// last 3 s, or in the neighbour's latest report while the bus is up and the
    /// neighbour not silent. A neighbour that stops reporting (killed, restarting, its
    /// reports held up) still hears whom its last report said it hears until it has been
    /// silent for 10 s (SPEC §17: until then it counts); one that goes on reporting without
    /// a person stops hearing them 3 s after it last named them.
    func counts(_ time: Int64, neighbour: Int, at now: Int64) -> Bool {
        guard time != Self.never, neighbour >= 0 else { return false }
        if now &- time <= freshness { return true }
        return busUp && lastMade[neighbour] &- time <= Self.reportSpread && now &- lastHeard[neighbour] <= silence
    }

    /// What a recorded sighting did to the neighbour's word that it confirmed the person's
    /// passage through its doorway.
    enum PassageWord {
        /// Older than the cell's latest: not taken.
        case late
        /// Said now, as in the neighbour's sighting before.
        case stillSaid
        /// Not said now, nor before.
        case notSaid
        /// Said now, and not in the neighbour's sighting before (or that was made more than
        /// 30 s before).
        case began
        /// No longer said.
        case ended
    }

    /// The neighbour's sighting of the person, made at `time`. The cell keeps the strongest
    /// of the neighbour's sightings made within `freshness` of the latest (of two: the peak,
    /// and the strongest made after it, which takes over when the peak ages out): a moment
    /// of fading at the neighbour does not make this door lead.
    @discardableResult
    mutating func record(person: Int, neighbour: Int, rssi sighted: Int8, holds: Bool, passageConfirmed: Bool = false,
                         time: Int64, at now: Int64) -> PassageWord {
        let cell = person * stride + neighbour
        // Reports of one sender arrive in order, but a late one never overwrites a newer.
        guard time >= cellTime[cell] else { return .late }
        // A neighbour says so for 30 s after its last confirmation: a sighting saying so
        // within that long before is the same word (a person not named for a few seconds),
        // not a new passage.
        let saidBefore = cellDoorway[cell] && cellTime[cell] != Self.never
            && time &- cellTime[cell] <= NeighbourSetup.doorwayMemory.nanosecondsClamped
        let word: PassageWord = switch (passageConfirmed, saidBefore) {
        case (true, true): .stillSaid
        case (true, false): .began
        case (false, true): .ended
        case (false, false): .notSaid
        }
        cellDoorway[cell] = passageConfirmed
        if cellPeakTime[cell] != Self.never, time &- cellPeakTime[cell] > freshness {
            let next = cellNextTime[cell] != Self.never && time &- cellNextTime[cell] <= freshness
            cellPeakTime[cell] = next ? cellNextTime[cell] : Self.never
            cellRSSI[cell] = cellNextRSSI[cell]
            cellNextTime[cell] = Self.never
        }
        if cellPeakTime[cell] == Self.never || sighted >= cellRSSI[cell] {
            cellRSSI[cell] = sighted
            cellPeakTime[cell] = time
            cellNextTime[cell] = Self.never
        } else if cellNextTime[cell] == Self.never || sighted >= cellNextRSSI[cell] {
            cellNextRSSI[cell] = sighted
            cellNextTime[cell] = time
        }
        let rssi = cellRSSI[cell]
        cellLatest[cell] = sighted
        cellHolds[cell] = holds
        cellTime[cell] = time
        // A summary that weakened (or lost its holder) is made afresh: another neighbour may
        // now be the strongest.
        var again = false
        let best = Int(bestIndex[person])
        if best == neighbour ? rssi >= bestRSSI[person] : (best < 0 || !counts(bestTime[person], neighbour: Int(bestIndex[person]), at: now) || rssi > bestRSSI[person]) {
            bestIndex[person] = Int16(neighbour)
            bestRSSI[person] = rssi
            bestTime[person] = time
        } else if best == neighbour {
            again = true
        }
        let latest = Int(latestIndex[person])
        if latest == neighbour
            ? sighted >= latestRSSI[person] : (latest < 0 || !counts(latestTime[person], neighbour: Int(latestIndex[person]), at: now) || sighted > latestRSSI[person]) {
            latestIndex[person] = Int16(neighbour)
            latestRSSI[person] = sighted
            latestTime[person] = time
        } else if latest == neighbour {
            again = true
        }
        if holds {
            holderIndex[person] = Int16(neighbour)
            holderTime[person] = time
        } else if Int(holderIndex[person]) == neighbour {
            again = true
        }
        if again { summarise(person: person, at: now) }
        return word
    }

    /// The strongest of the neighbours' latest fresh sightings of the person at `now`
    /// (O(1) while the cached one is fresh, as `strongest`).
    mutating func latest(person: Int, at now: Int64) -> (neighbour: Int, rssi: Int, time: Int64)? {
        guard person < latestIndex.count, latestIndex[person] >= 0 else { return nil }
        if !counts(latestTime[person], neighbour: Int(latestIndex[person]), at: now) {
            summarise(person: person, at: now)
            guard latestIndex[person] >= 0 else { return nil }
        }
        return (Int(latestIndex[person]), Int(latestRSSI[person]), latestTime[person])
    }

    /// The strongest fresh sighting of the person at `now`. O(1) while the cached one is
    /// fresh; when it has aged out, one pass over the person's neighbours finds the next.
    /// `rssi`: the strongest of its recent sightings; `time`: when its latest was made.
    mutating func strongest(person: Int, at now: Int64) -> (neighbour: Int, rssi: Int, time: Int64, holds: Bool)? {
        guard person < bestIndex.count, bestIndex[person] >= 0 else { return nil }
        if !counts(bestTime[person], neighbour: Int(bestIndex[person]), at: now) {
            summarise(person: person, at: now)
            guard bestIndex[person] >= 0 else { return nil }
        }
        let neighbour = Int(bestIndex[person])
        return (neighbour, Int(bestRSSI[person]), bestTime[person], cellHolds[person * stride + neighbour])
    }

    /// The neighbour's latest sighting of the person (fresh while `strongest` names it).
    func latestRSSI(person: Int, neighbour: Int) -> Int { Int(cellLatest[person * stride + neighbour]) }

    /// Whether a neighbour's fresh sighting says it holds the person's visit open.
    mutating func heldElsewhere(person: Int, at now: Int64) -> Bool {
        guard person < holderIndex.count, holderIndex[person] >= 0 else { return false }
        if !counts(holderTime[person], neighbour: Int(holderIndex[person]), at: now) { summarise(person: person, at: now) }
        return holderIndex[person] >= 0
    }

    /// The summary of the person's row afresh.
    private mutating func summarise(person: Int, at now: Int64) {
        var best = -1, bestValue = Int8.min, bestAt = Self.never
        var holder = -1, holderAt = Self.never
        var latest = -1, latestValue = Int8.min, latestAt = Self.never
        let base = person * stride
        for neighbour in 0 ..< stride {
            let time = cellTime[base + neighbour]
            guard counts(time, neighbour: neighbour, at: now) else { continue }
            let rssi = cellRSSI[base + neighbour]
            if best < 0 || rssi > bestValue { (best, bestValue, bestAt) = (neighbour, rssi, time) }
            let last = cellLatest[base + neighbour]
            if latest < 0 || last > latestValue { (latest, latestValue, latestAt) = (neighbour, last, time) }
            if cellHolds[base + neighbour], time > holderAt { (holder, holderAt) = (neighbour, time) }
        }
        bestIndex[person] = Int16(best)
        bestRSSI[person] = bestValue
        bestTime[person] = bestAt
        holderIndex[person] = Int16(holder)
        holderTime[person] = holderAt
        latestIndex[person] = Int16(latest)
        latestRSSI[person] = latestValue
        latestTime[person] = latestAt
    }

    /// Neighbours heard within `silence` of `now`.
    func heard(at now: Int64, silence: Int64) -> Int {
        lastHeard.reduce(0) { $0 + ($1 != Self.never && now &- $1 <= silence ? 1 : 0) }
    }

    func isSilent(_ neighbour: Int, at now: Int64, silence: Int64) -> Bool {
        lastHeard[neighbour] == Self.never || now &- lastHeard[neighbour] > silence
    }
}
