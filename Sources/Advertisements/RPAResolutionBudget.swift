import EventLoop
import HCI

/// How much AES work resolving unknown resolvable private addresses may cost
/// (docs/identities.md, "Address floods"): a sans-IO token bucket of IRK tries, refilled
/// with time, and a gate that asks an unknown address to be heard more often before it
/// is tried while the bucket runs dry.
///
/// Why: each new address costs one AES call per configured IRK. A device that makes up
/// 1,000 addresses a second against 500 enrolled phones would ask for 500,000 calls a
/// second, a large share of a Pi's core (docs/benchmarks.md). A real phone keeps one
/// address for minutes and is heard at every advertising interval; made-up addresses are
/// heard a few times each.
/// So under pressure the gate rises (2, 4, … 64 sightings: each second in which the
/// bucket ran dry doubles it), which costs the flood its packets and a phone a few more of
/// its advertisements, and halves after each minute in which it did not, back to 1.
/// Addresses already known (cached) never cost anything.
public struct RPAResolutionBudget: Sendable {
    /// IRK tries per second: the default is a small share of a Pi's core
    /// (docs/benchmarks.md) and 100 new addresses a second against 500 IRKs; a door meets
    /// perhaps one new phone address a second.
    public let triesPerSecond: Int
    public private(set) var tokens: Int
    /// Sightings an unknown address needs before it is tried.
    public private(set) var gate = 1
    private var lastRefill: Instant?
    private var lastAdapt: Instant?
    private var deferredSinceAdapt = 0
    private var calmSeconds = 0

    public static let maximumGate = 64
    /// Seconds without a turned-away address before the gate halves.
    public static let calmSecondsBeforeLowering = 60

    public init(triesPerSecond: Int = 50_000) {
        self.triesPerSecond = max(1, triesPerSecond)
        tokens = self.triesPerSecond
    }

    /// Time passed: the bucket refills (at most a second's worth), and once a second the
    /// gate follows what the last second asked for.
    public mutating func refill(at now: Instant) {
        if let last = lastRefill, now > last {
            let elapsed = (now - last).nanosecondsClamped
            let added = elapsed >= 1_000_000_000 ? triesPerSecond
                : Int((Int64(triesPerSecond) * elapsed) / 1_000_000_000)
            tokens = min(triesPerSecond, tokens + added)
        }
        if lastRefill == nil || now > lastRefill! { lastRefill = now }
        guard let adapted = lastAdapt else {
            lastAdapt = now
            return
        }
        guard now - adapted >= .seconds(1) else { return }
        lastAdapt = now
        if deferredSinceAdapt > 0 {
            gate = min(gate * 2, Self.maximumGate)
            calmSeconds = 0
        } else if gate > 1 {
            // Down slowly: a flood the gate holds off spends nothing, and would otherwise
            // be let in again every other second.
            calmSeconds += 1
            if calmSeconds >= Self.calmSecondsBeforeLowering {
                gate /= 2
                calmSeconds = 0
            }
        }
        deferredSinceAdapt = 0
    }

    /// Takes `tries` tokens if there are that many.
    mutating func take(_ tries: Int) -> Bool {
        guard tokens >= tries else {
            deferredSinceAdapt += 1
            return false
        }
        tokens -= tries
        return true
    }

    /// Gives back what a resolution did not use (it matched before the last IRK).
    mutating func refund(_ tries: Int) {
        tokens = min(triesPerSecond, tokens + tries)
    }
}

/// How often each unknown address was heard while it waited for the gate: bounded, the
/// oldest forgotten first (a flood pushes out its own addresses as fast as it makes them).
struct AddressSightings: Sendable {
    private var counts: FlatHashTable<UInt64>
    private var order: InsertionRing

    init(capacity: Int = 4096) {
        counts = FlatHashTable(minimumCapacity: capacity)
        order = InsertionRing(capacity: capacity)
    }

    var count: Int { counts.count }

    /// One more sighting of `address`; returns how many there have been.
    mutating func heard(_ address: BluetoothAddress) -> Int {
        if let seen = counts[address.rawValue] {
            let next = seen < Int32.max ? seen + 1 : seen
            counts.updateValue(next, forKey: address.rawValue)
            return Int(next)
        }
        if let evicted = order.append(address.rawValue) { counts.removeValue(forKey: evicted) }
        counts.updateValue(1, forKey: address.rawValue)
        return 1
    }

    mutating func removeAll() {
        counts.removeAll()
        order.removeAll()
    }
}
