/// What the neighbours said of each person (docs/neighbours.md): per person and
/// neighbour the strongest of its sightings of the last 3 s and when its latest was made,
/// and per person a cached summary (the strongest fresh sighting, and a neighbour holding
/// the visit) so that a report of this door's radio reads O(1), whatever the number of
/// neighbours. Memory: persons × neighbours cells of 18 bytes, plus a few bytes per
/// person and per neighbour.
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

    /// Cells, person-major, `stride` per person (grows as `"*"` learns doors).
    private(set) var stride = 0
    /// The strongest of the neighbour's recent sightings (docs/neighbours.md: over the
    /// last 3 s), made at `cellPeakTime`; `cellTime`: when its latest was made.
    var cellRSSI: [Int8] = []
    var cellHolds: [Bool] = []
    var cellTime: [Int64] = []
    var cellPeakTime: [Int64] = []

    /// Per person: the strongest sighting that was fresh when it was computed (−1: none),
    /// and the neighbour whose fresh sighting says it holds the visit (−1: none).
    var bestIndex: [Int16] = []
    var bestRSSI: [Int8] = []
    var bestTime: [Int64] = []
    var holderIndex: [Int16] = []
    var holderTime: [Int64] = []

    let freshness: Int64

    init(neighbours: NeighbourList, persons: Int) {
        freshness = NeighbourSetup.freshness.nanosecondsClamped
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
        cellHolds = Array(repeating: false, count: persons * stride)
        cellTime = Array(repeating: Self.never, count: persons * stride)
        cellPeakTime = Array(repeating: Self.never, count: persons * stride)
        bestIndex = Array(repeating: -1, count: persons)
        bestRSSI = Array(repeating: 0, count: persons)
        bestTime = Array(repeating: Self.never, count: persons)
        holderIndex = Array(repeating: -1, count: persons)
        holderTime = Array(repeating: Self.never, count: persons)
    }

    private mutating func add(_ id: String) {
        indexById[id] = ids.count
        ids.append(id)
        lastHeard.append(Self.never)
        lastReportWall.append(Int64.min)
    }

    /// A verified report from `sender`, made at wall time `wall`: its neighbour index, or
    /// why it is not taken (a replay, or one door too many under `"*"`).
    mutating func accept(sender: String, wall: Int64, at now: Int64) -> Result<Int, SightingRefusal> {
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
        return .success(neighbour)
    }

    /// One more column per person (a door learnt under `"*"`): cells copied across.
    private mutating func widen() {
        let persons = personCount
        let newStride = ids.count
        var rssi = Array(repeating: Int8(0), count: persons * newStride)
        var holds = Array(repeating: false, count: persons * newStride)
        var time = Array(repeating: Self.never, count: persons * newStride)
        var peakTime = time
        for person in 0 ..< persons {
            for neighbour in 0 ..< stride {
                rssi[person * newStride + neighbour] = cellRSSI[person * stride + neighbour]
                holds[person * newStride + neighbour] = cellHolds[person * stride + neighbour]
                time[person * newStride + neighbour] = cellTime[person * stride + neighbour]
                peakTime[person * newStride + neighbour] = cellPeakTime[person * stride + neighbour]
            }
        }
        stride = newStride
        cellRSSI = rssi
        cellHolds = holds
        cellTime = time
        cellPeakTime = peakTime
    }

    func isFresh(_ time: Int64, at now: Int64) -> Bool {
        time != Self.never && now &- time <= freshness
    }

    /// The neighbour's sighting of the person, made at `time`. The cell keeps the strongest
    /// of the neighbour's sightings made within `freshness` of its peak: a moment of fading
    /// at the neighbour does not make this door lead.
    mutating func record(person: Int, neighbour: Int, rssi sighted: Int8, holds: Bool, time: Int64, at now: Int64) {
        let cell = person * stride + neighbour
        // Reports of one sender arrive in order, but a late one never overwrites a newer.
        guard time >= cellTime[cell] else { return }
        var rssi = sighted
        if sighted >= cellRSSI[cell] || cellPeakTime[cell] == Self.never || time &- cellPeakTime[cell] > freshness {
            cellPeakTime[cell] = time
        } else {
            rssi = cellRSSI[cell]
        }
        cellRSSI[cell] = rssi
        cellHolds[cell] = holds
        cellTime[cell] = time
        let best = Int(bestIndex[person])
        if best == neighbour ? rssi >= bestRSSI[person] : (best < 0 || !isFresh(bestTime[person], at: now) || rssi > bestRSSI[person]) {
            bestIndex[person] = Int16(neighbour)
            bestRSSI[person] = rssi
            bestTime[person] = time
        } else if best == neighbour {
            // The strongest weakened: another neighbour may now be the strongest.
            summarise(person: person, at: now)
            return
        }
        if holds {
            holderIndex[person] = Int16(neighbour)
            holderTime[person] = time
        } else if Int(holderIndex[person]) == neighbour {
            summarise(person: person, at: now)
        }
    }

    /// The strongest fresh sighting of the person at `now`. O(1) while the cached one is
    /// fresh; when it has aged out, one pass over the person's neighbours finds the next.
    /// `rssi`: the strongest of its recent sightings; `time`: when its latest was made.
    mutating func strongest(person: Int, at now: Int64) -> (neighbour: Int, rssi: Int, time: Int64, holds: Bool)? {
        guard person < bestIndex.count, bestIndex[person] >= 0 else { return nil }
        if !isFresh(bestTime[person], at: now) {
            summarise(person: person, at: now)
            guard bestIndex[person] >= 0 else { return nil }
        }
        let neighbour = Int(bestIndex[person])
        return (neighbour, Int(bestRSSI[person]), bestTime[person], cellHolds[person * stride + neighbour])
    }

    /// Whether a neighbour's fresh sighting says it holds the person's visit open.
    mutating func heldElsewhere(person: Int, at now: Int64) -> Bool {
        guard person < holderIndex.count, holderIndex[person] >= 0 else { return false }
        if !isFresh(holderTime[person], at: now) { summarise(person: person, at: now) }
        return holderIndex[person] >= 0
    }

    /// The summary of the person's row afresh.
    private mutating func summarise(person: Int, at now: Int64) {
        var best = -1, bestValue = Int8.min, bestAt = Self.never
        var holder = -1, holderAt = Self.never
        let base = person * stride
        for neighbour in 0 ..< stride {
            let time = cellTime[base + neighbour]
            guard isFresh(time, at: now) else { continue }
            let rssi = cellRSSI[base + neighbour]
            if best < 0 || rssi > bestValue { (best, bestValue, bestAt) = (neighbour, rssi, time) }
            if cellHolds[base + neighbour], time > holderAt { (holder, holderAt) = (neighbour, time) }
        }
        bestIndex[person] = Int16(best)
        bestRSSI[person] = bestValue
        bestTime[person] = bestAt
        holderIndex[person] = Int16(holder)
        holderTime[person] = holderAt
    }

    /// Neighbours heard within `silence` of `now`.
    func heard(at now: Int64, silence: Int64) -> Int {
        lastHeard.reduce(0) { $0 + ($1 != Self.never && now &- $1 <= silence ? 1 : 0) }
    }

    func isSilent(_ neighbour: Int, at now: Int64, silence: Int64) -> Bool {
        lastHeard[neighbour] == Self.never || now &- lastHeard[neighbour] > silence
    }
}
