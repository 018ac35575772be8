// Presence engine throughput at a busy door (see docs/presence.md):
//   swift run -c release PresenceBenchmark [--persons 2000] [--noise 10000] [--samples 20000000] [--seed 1]
//
// 2,000 persons × 2 tags (iBeacon) and 10,000 noise advertisers. Tag samples follow
// per-person random walks of RSSI around the thresholds (people arriving, standing at the
// door, leaving; 20 % of reports lost), at a tag interval of 700 ms, so the stream holds
// real check-ins, checkouts and timer work. The stream is generated first; the timed
// loops then only feed it.
//
// Printed: the engine alone (samples/s, ns/sample; target ≥ 2,000,000 samples/s), the
// whole per-report path for tag reports (keys → TagMatcher → engine), and noise reports
// (keys → TagMatcher, dropped), with the events decided.
#if canImport(Glibc)
import Advertisements
import Glibc
#endif
import EventLoop
import GatewayCore
import HCI
import SplitMix

struct Options {
    var persons = 2000
    var noise = 10000
    var samples = 20_000_000
    var seed: UInt64 = 1

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            guard let value = iterator.next() else { Options.usage("\(argument) needs a value") }
            switch argument {
            case "--persons": persons = Options.positive(value, argument)
            case "--noise": noise = Options.positive(value, argument)
            case "--samples": samples = Options.positive(value, argument)
            case "--seed": seed = UInt64(Options.positive(value, argument))
            default: Options.usage("unknown option \(argument)")
            }
        }
    }

    static func positive(_ text: String, _ name: String) -> Int {
        guard let value = Int(text), value > 0 else { usage("\(name) must be a positive integer") }
        return value
    }

    static func usage(_ message: String) -> Never {
        print("PresenceBenchmark: \(message)\nusage: PresenceBenchmark [--persons N] [--noise N] [--samples N] [--seed N]")
        exit(2)
    }
}


extension Int {
    /// 1234567 → "1,234,567" without Foundation.
    var formatted3: String {
        let digits = Array(String(magnitude))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (self < 0 ? "-" : "") + out
    }
}

extension String {
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}

func runBenchmark() {
    let options = Options(arguments: CommandLine.arguments)
    var rng = SplitMix64(seed: options.seed)
    let clock = SystemClock()

    func elapsed(_ start: Instant) -> Double { (clock.now - start).secondsDouble }
    /// This process's CPU time: on a machine shared with other work, wall time overstates
    /// the cost, so both are printed.
    func cpuSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
    func rate(_ count: Int, _ seconds: Double) -> String {
        let perSecond = Double(count) / max(seconds, 1e-9)
        return "\(Int(perSecond).formatted3) /s, \(String(format1: 1e9 * seconds / Double(max(count, 1)))) ns each"
    }

    // MARK: Configuration: 2,000 persons × 2 iBeacon tags

    let uuid: [UInt8] = [0xF7, 0x82, 0x6D, 0xA6, 0x4F, 0xA2, 0x4E, 0x98, 0x80, 0x24, 0xBC, 0x5B, 0x71, 0xE0, 0x89, 0x3E]
    var configured: [ConfiguredTag] = []
    for person in 0 ..< options.persons {
        for tag in 0 ..< 2 {
            let n = person * 2 + tag
            configured.append(ConfiguredTag(tagId: "tag-\(n)", personId: "u_\(person)",
                                            identities: [.iBeacon(uuid: uuid, major: UInt16(n / 1000), minor: UInt16(n % 1000))]))
        }
    }
    var matcher = TagMatcher(tags: configured)
    let persons = PresencePerson.grouping(configured)
    let settings = PresenceSettings()

    /// iBeacon advertising data as tags send it.
    func iBeaconData(major: UInt16, minor: UInt16) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
    }

    // MARK: The stream

    struct Sample {
        var tag: Int32
        var rssi: Int8
    }

    /// Each person walks: away (−95) → approaching → at the door (−55…−65) for a while →
    /// leaving; their two tags differ by a few dB; ±5 dB noise; 20 % of reports lost.
    let tagCount = configured.count
    let intervalNs: Int64 = 700_000_000
    let perSampleNs = max(intervalNs / Int64(tagCount), 1)
    let streamLength = min(options.samples, 4_000_000)
    var stream: [Sample] = []
    stream.reserveCapacity(streamLength)
    var level = (0 ..< options.persons).map { _ in -100 + Int(rng.next() % 50) }
    var drift = (0 ..< options.persons).map { _ in Int(rng.next() % 3) - 1 }
    var cursor = 0
    while stream.count < streamLength {
        let tag = cursor % tagCount
        cursor += 1
        let person = tag / 2
        if tag % 2 == 0 {
            // Once per round of this person's reports: drift, sometimes turn around.
            if rng.next() % 40 == 0 { drift[person] = Int(rng.next() % 3) - 1 }
            level[person] = min(-50, max(-100, level[person] + drift[person]))
        }
        guard rng.next() % 5 != 0 else { continue }
        let noise = Int(rng.next() % 11) - 5
        stream.append(Sample(tag: Int32(tag), rssi: Int8(clamping: level[person] - (tag % 2) * 3 + noise)))
    }

    print("presence benchmark: \(options.persons.formatted3) persons × 2 tags, \(options.noise.formatted3) noise advertisers, "
        + "\(options.samples.formatted3) samples (stream of \(stream.count.formatted3), one report every \(perSampleNs / 1000) µs)")

    // MARK: 1. The engine alone

    var engine = PresenceEngine(settings: settings, persons: persons,
                                wallClock: WallClockMapping(anchor: .zero, wallMilliseconds: 1_789_012_345_678))
    let address = BluetoothAddress(rawValue: 0xC0_11_22_33_44_55)
    var now = Instant(nanoseconds: 1_000_000_000)
    var checkins = 0, checkouts = 0, otherEvents = 0
    func count(_ events: [PresenceEvent]) {
        for event in events {
            switch event {
            case .checkin: checkins += 1
            case .checkout: checkouts += 1
            default: otherEvents += 1
            }
        }
    }

    let engineStart = clock.now
    let engineCPUStart = cpuSeconds()
    var fed = 0
    while fed < options.samples {
        for sample in stream {
            if fed == options.samples { break }
            now.nanoseconds &+= perSampleNs
            if let deadline = engine.nextDeadline, deadline <= now { count(engine.advance(to: now)) }
            let events = engine.sample(tagIndex: Int(sample.tag), rssi: Int(sample.rssi), address: address,
                                       addressType: .randomDevice, txPower: -59, at: now)
            if !events.isEmpty { count(events) }
            fed += 1
        }
    }
    let engineSeconds = elapsed(engineStart)
    let engineCPUSeconds = cpuSeconds() - engineCPUStart
    let engineRate = Double(fed) / engineSeconds
    print("engine      \(rate(fed, engineSeconds))  (target ≥ 2,000,000 /s: \(engineRate >= 2_000_000 ? "met" : "NOT met"))")
    print("            by CPU time: \(rate(fed, engineCPUSeconds))")
    print("            \(checkins.formatted3) checkins, \(checkouts.formatted3) checkouts, \(otherEvents.formatted3) state changes "
        + "over \(Int(now.seconds / 60)) simulated minutes; \(engine.openVisits) visits open at the end")

    // MARK: 2. Tag reports through keys, matcher and engine

    let tagData = configured.indices.map { iBeaconData(major: UInt16($0 / 1000), minor: UInt16($0 % 1000)) }
    var fullEngine = PresenceEngine(settings: settings, persons: persons)
    let pathCount = min(options.samples, stream.count)
    var unmatched = 0
    now = Instant(nanoseconds: 1_000_000_000)
    let pathStart = clock.now
    for sample in stream.prefix(pathCount) {
        now.nanoseconds &+= perSampleNs
        if let deadline = fullEngine.nextDeadline, deadline <= now { _ = fullEngine.advance(to: now) }
        let keys = AdvertisementKeys(scanning: tagData[Int(sample.tag)])
        guard let match = matcher.match(address: address, addressType: .randomDevice, keys: keys) else {
            unmatched += 1
            continue
        }
        _ = fullEngine.sample(tagIndex: match.tagIndex, rssi: Int(sample.rssi), address: address, addressType: .randomDevice,
                              txPower: keys.iBeacon.map { Int($0.measuredPower) }, at: now)
    }
    let pathSeconds = elapsed(pathStart)
    print("tag reports \(rate(pathCount, pathSeconds))  (keys → TagMatcher → engine; \(unmatched) unmatched)")

    // MARK: 3. Noise: decoded and dropped

    var noiseData: [[UInt8]] = []
    var noiseAddresses: [BluetoothAddress] = []
    for i in 0 ..< options.noise {
        let company = [0x0006, 0x0075, 0x00E0, 0x0087, 0x004C][i % 5]
        let payload = (0 ..< (2 + Int(rng.next() % 20))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        noiseData.append([0x02, 0x01, 0x1A, UInt8(3 + payload.count), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + payload)
        noiseAddresses.append(BluetoothAddress(rawValue: rng.next()))
    }
    let noiseCount = min(options.samples, 5_000_000)
    var noiseMatched = 0
    let noiseStart = clock.now
    for i in 0 ..< noiseCount {
        let device = i % options.noise
        let keys = AdvertisementKeys(scanning: noiseData[device])
        if matcher.match(address: noiseAddresses[device], addressType: .publicDevice, keys: keys) != nil { noiseMatched += 1 }
    }
    let noiseSeconds = elapsed(noiseStart)
    print("noise       \(rate(noiseCount, noiseSeconds))  (keys → TagMatcher → dropped; \(noiseMatched) matched by mistake)")
    print("engine      \(engine.personCount.formatted3) persons; ring buffers \(settings.samplesPerTag) samples × \(tagCount.formatted3) tags "
        // Per sample: an Int32 time (ms after the ring's epoch) and an Int8 RSSI.
        + "= \((settings.samplesPerTag * tagCount * (MemoryLayout<Int32>.size + MemoryLayout<Int8>.size) / 1024).formatted3) KiB")
}

runBenchmark()
