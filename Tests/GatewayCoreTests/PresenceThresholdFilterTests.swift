import AttendanceEvents
import EventLoop
import HCI
import XCTest
@testable import GatewayCore
import SplitMix

/// A sample's decision compares the person's median with one threshold in a single pass
/// over the window instead of sorting it. These check that against the sort-based median
/// the engine used before, window by window and over whole random runs of the engine.
final class PresenceThresholdFilterTests: XCTestCase {
    /// The median as the engine computed it with a sort: for an even count the mean of
    /// the two middles rounded down. Nil for an empty window.
    static func sortedMedian(_ values: [Int8]) -> Int? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let upper = sorted.count / 2
        if sorted.count % 2 == 1 { return Int(sorted[upper]) }
        return (Int(sorted[upper - 1]) + Int(sorted[upper])) >> 1
    }

    func testThresholdDecisionIsTheSortedMedianComparedWithTheThreshold() {
        var rng = SplitMix64(seed: 0x5EED_0F_F11E)
        func random(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }
        var decided = (above: 0, notAbove: 0, evenTies: 0)
        for _ in 0 ..< 40000 {
            let capacity = random(1 ... 2) == 1 ? random(1 ... 16) : random(1 ... PresenceSettings.maximumSamplesPerTag)
            let count = random(1 ... min(capacity, random(1 ... 2) == 1 ? 8 : capacity))
            let head = random(0 ... capacity - 1)
            // Narrow ranges make duplicates and values equal to the threshold common.
            let spread = random(0 ... 3) == 0 ? PresenceEngine.validRSSI : -75 ... -65
            var ring = (0 ..< capacity).map { _ in Int8(random(spread)) }
            // Values outside the window must not count: make them extreme.
            var window: [Int8] = []
            for i in 0 ..< capacity {
                let position = (head + i) % capacity
                if i < count { window.append(ring[position]) } else { ring[position] = i % 2 == 0 ? 20 : -127 }
            }
            let threshold = random(0 ... 2) == 0 ? Int(window[random(0 ... count - 1)]) : random(-128 ... 21)
            let expected = Self.sortedMedian(window)! > threshold
            let actual = ring.withUnsafeBufferPointer {
                PresenceEngine.median(ofRing: $0, head: head, count: count, exceeds: threshold)
            }
            guard actual == expected else {
                XCTFail("window \(window) (head \(head) of \(capacity)), threshold \(threshold): \(actual), sorted median says \(expected)")
                return
            }
            if expected { decided.above += 1 } else { decided.notAbove += 1 }
            let aboveCount = window.filter { Int($0) > threshold }.count
            if count % 2 == 0, aboveCount == count / 2 { decided.evenTies += 1 }
        }
        // Every branch of the decision was taken many times.
        XCTAssertGreaterThan(decided.above, 5000)
        XCTAssertGreaterThan(decided.notAbove, 5000)
        XCTAssertGreaterThan(decided.evenTies, 1000)
    }

    func testTagDecisionMatchesTheSortedMedianOfItsWindowIncludingEmptyOnes() {
        var rng = SplitMix64(seed: 0xF11_7E2)
        func random(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }
        var settings = PresenceSettings()
        settings.window = .seconds(2)
        settings.minSamples = 1
        settings.samplesPerTag = 16
        var engine = PresenceEngine(settings: settings, persons: [
            PresencePerson(id: "p", requireProof: false, tags: [PresenceTag(index: 0, id: "t")]),
        ])
        var nowMs: Int64 = 0
        var sizes = Set<Int>()
        for _ in 0 ..< 20_000 {
            // Gaps up to past the window, so windows from empty to full all occur.
            nowMs += Int64(random(0 ... 9) == 0 ? random(0 ... 2500) : random(0 ... 100))
            let now = nowMs * 1_000_000
            if random(0 ... 3) != 0 {
                engine.append(slot: 0, time: now, rssi: Int8(random(-80 ... -60)))
            }
            let threshold = random(-81 ... -59)
            let window = engine.series(slot: 0, now: now)
            sizes.insert(window.count)
            let expected = Self.sortedMedian(window).map { $0 > threshold }
            XCTAssertEqual(engine.filtered(slot: 0, now: now, exceeds: threshold), expected, "window \(window), threshold \(threshold)")
            XCTAssertEqual(engine.filtered(slot: 0, now: now), Self.sortedMedian(window), "window \(window)")
        }
        XCTAssertEqual(sizes, Set(0 ... 16), "every window size from empty to full was checked")
    }

    /// A random door: persons with one to three tags, a random walk of RSSI per tag near
    /// the thresholds, proofs, a hold of checkins, link losses and gaps. The engine and
    /// `ReferenceDoor` (the engine's own timers and bookkeeping, with main's sort-based
    /// decision) are fed the same inputs and must say exactly the same things.
    func testEngineDecidesExactlyAsTheSortBasedReference() {
        var totals = (checkins: 0, checkouts: 0, unconfirmed: 0, multiTagCheckins: 0)
        for seed in UInt64(1) ... 300 {
            guard let run = runAgainstReference(seed: seed) else { return }
            totals.checkins += run.checkins
            totals.checkouts += run.checkouts
            totals.unconfirmed += run.unconfirmed
            totals.multiTagCheckins += run.multiTagCheckins
        }
        // The runs must exercise every signal-driven transition, for several-tag persons too.
        XCTAssertGreaterThan(totals.checkins, 1000)
        XCTAssertGreaterThan(totals.checkouts, 500)
        XCTAssertGreaterThan(totals.unconfirmed, 1000)
        XCTAssertGreaterThan(totals.multiTagCheckins, 300)
    }

    private func runAgainstReference(seed: UInt64) -> (checkins: Int, checkouts: Int, unconfirmed: Int, multiTagCheckins: Int)? {
        var rng = SplitMix64(seed: seed)
        func random(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }
        func chance(_ percent: Int) -> Bool { Int(rng.next() % 100) < percent }

        var settings = PresenceSettings()
        settings.enterRSSI = random(-75 ... -60)
        settings.exitRSSI = settings.enterRSSI - random(0 ... 8)
        settings.window = .milliseconds(random(500 ... 4000))
        settings.minSamples = random(1 ... 4)
        settings.samplesPerTag = random(1 ... 12)
        settings.lostAfter = .seconds(random(2 ... 10))
        settings.leaveAfter = .seconds(random(2 ... 30))
        settings.awayAfter = .seconds(random(3 ... 30))
        settings.proofTTL = .seconds(random(5 ... 60))

        var persons: [PresencePerson] = []
        var tagCount = 0
        for p in 0 ..< random(1 ... 4) {
            let tags = (0 ..< (chance(60) ? 1 : random(2 ... 3))).map { _ in
                defer { tagCount += 1 }
                return PresenceTag(index: tagCount, id: "t\(tagCount)")
            }
            persons.append(PresencePerson(id: "p\(p)", requireProof: chance(20), tags: tags))
        }
        let multiTag = Set(persons.filter { $0.tags.count > 1 }.map(\.id))
        var rssi = (0 ..< tagCount).map { _ in settings.enterRSSI + random(-6 ... 6) }

        var engine = PresenceEngine(settings: settings, persons: persons)
        var reference = ReferenceDoor(engine: PresenceEngine(settings: settings, persons: persons))
        var nowMs: Int64 = 0
        var result = (checkins: 0, checkouts: 0, unconfirmed: 0, multiTagCheckins: 0)

        func compare(_ actual: [PresenceEvent], _ expected: [PresenceEvent], _ step: String) -> Bool {
            guard actual == expected else {
                XCTFail("seed \(seed), \(step) at \(nowMs) ms: engine said \(actual), reference \(expected)")
                return false
            }
            for event in actual {
                switch event {
                case let .checkin(decision):
                    result.checkins += 1
                    if multiTag.contains(decision.personId) { result.multiTagCheckins += 1 }
                case .checkout: result.checkouts += 1
                case .stateChanged(_, _, .unconfirmed, _): result.unconfirmed += 1
                default: break
                }
            }
            return true
        }

        for _ in 0 ..< 400 {
            nowMs += Int64(chance(2) ? random(5_000 ... 60_000) : random(20 ... 400))
            let now = Instant(nanoseconds: nowMs * 1_000_000)
            if chance(50) {
                guard compare(engine.advance(to: now), reference.engine.advance(to: now), "advance") else { return nil }
            }
            if chance(2) {
                let held = chance(50)
                engine.checkinsHeld = held
                reference.engine.checkinsHeld = held
            }
            for person in persons {
                for tag in person.tags where chance(60) {
                    rssi[tag.index] = min(-50, max(-90, rssi[tag.index] + random(-3 ... 3)))
                    let value = chance(1) ? random(PresenceEngine.validRSSI) : rssi[tag.index] + random(-2 ... 2)
                    let address = BluetoothAddress(rawValue: UInt64(tag.index + 1))
                    let txPower = chance(50) ? -59 : nil
                    guard compare(engine.sample(tagIndex: tag.index, rssi: value, address: address, addressType: .randomDevice,
                                                txPower: txPower, at: now),
                                  reference.sample(tagIndex: tag.index, rssi: value, address: address, addressType: .randomDevice,
                                                   txPower: txPower, at: now),
                                  "sample \(value) of \(tag.id)") else { return nil }
                }
                if person.requireProof, chance(4), let tag = person.tags.randomElement(using: &rng) {
                    let roundTrip = random(50 ... 400)
                    guard compare(engine.proofSucceeded(tagIndex: tag.index, at: now, roundTripMilliseconds: roundTrip),
                                  reference.proofSucceeded(tagIndex: tag.index, at: now, roundTripMilliseconds: roundTrip),
                                  "proof of \(tag.id)") else { return nil }
                }
                if chance(1), let tag = person.tags.randomElement(using: &rng) {
                    guard compare(engine.linkLost(tagIndex: tag.index, at: now), reference.engine.linkLost(tagIndex: tag.index, at: now),
                                  "link loss of \(tag.id)") else { return nil }
                }
            }
        }
        let end = Instant(nanoseconds: (nowMs + 10_000_000) * 1_000_000)
        guard compare(engine.advance(to: end), reference.engine.advance(to: end), "final silence") else { return nil }
        XCTAssertEqual(engine.records, reference.engine.records, "seed \(seed)")
        XCTAssertEqual(engine.counters, reference.engine.counters, "seed \(seed)")
        return result
    }
}

/// The engine with main's per-sample decision: each tag's median by sorting its window,
/// the person's signal the strongest (the first on ties), compared with the thresholds.
/// Timers, rings, proofs and state changes are the engine's own.
struct ReferenceDoor {
    var engine: PresenceEngine

    mutating func sample(tagIndex: Int, rssi: Int, address: BluetoothAddress, addressType: AddressType,
                         txPower: Int?, at time: Instant) -> [PresenceEvent] {
        guard let slot = engine.tagSlot(forTagIndex: tagIndex) else {
            engine.counters.unknownTag &+= 1
            return []
        }
        guard PresenceEngine.validRSSI.contains(rssi) else {
            engine.counters.invalidRSSI &+= 1
            return []
        }
        engine.counters.samples &+= 1
        let now = engine.monotonic(time)
        let person = Int(engine.tags[slot].person)
        var events: [PresenceEvent] = []
        engine.fireDue(person: person, now: now, into: &events)
        engine.append(slot: slot, time: now, rssi: Int8(rssi))
        engine.tags[slot].address = address
        engine.tags[slot].addressType = addressType
        if let txPower { engine.tags[slot].txPower = Int8(clamping: txPower) }
        engine.persons[person].lastSample = now
        if engine.persons[person].state == .outside {
            engine.setState(person: person, to: .nearby, at: now, into: &events)
        }
        evaluate(person: person, now: now, into: &events)
        engine.schedule(person: person)
        return events
    }

    mutating func proofSucceeded(tagIndex: Int, at time: Instant, roundTripMilliseconds: Int) -> [PresenceEvent] {
        guard let slot = engine.tagSlot(forTagIndex: tagIndex) else { return [] }
        let now = engine.monotonic(time)
        guard !engine.isLocked(engine.tags[slot], now: now) else { return [] }
        engine.tags[slot].proofAt = now
        engine.tags[slot].proofRoundTripMs = max(0, roundTripMilliseconds)
        let person = Int(engine.tags[slot].person)
        var events: [PresenceEvent] = []
        engine.fireDue(person: person, now: now, into: &events)
        evaluate(person: person, now: now, into: &events)
        engine.schedule(person: person)
        return events
    }

    /// The person's signal from sorted windows.
    mutating func signal(person: Int, now: Int64) -> (rssi: Int, tag: Int32)? {
        var best: (rssi: Int, tag: Int32)?
        for slot in engine.persons[person].tagSlots {
            let window = engine.series(slot: slot, now: now)
            guard window.count >= engine.minSamples,
                  let median = PresenceThresholdFilterTests.sortedMedian(window) else { continue }
            if let current = best, median <= current.rssi { continue }
            best = (median, Int32(slot))
        }
        return best
    }

    mutating func evaluate(person: Int, now: Int64, into events: inout [PresenceEvent]) {
        let state = engine.persons[person].state
        guard state != .outside, let signal = signal(person: person, now: now) else { return }
        switch state {
        case .nearby:
            guard signal.rssi > engine.limits.enter, !engine.checkinsHeld else { return }
            var handshake: AttendanceEvent.Handshake?
            if engine.persons[person].requireProof {
                guard case let .valid(roundTripMs) = engine.proof(person: person, now: now) else {
                    if case let .missing(reason) = engine.proof(person: person, now: now),
                       !engine.persons[person].waitingReported {
                        engine.persons[person].waitingReported = true
                        events.append(.waitingForProof(personId: engine.persons[person].id, reason: reason))
                    }
                    return
                }
                handshake = .init(ok: true, roundTripMilliseconds: roundTripMs)
            }
            engine.persons[person].visitStart = now
            engine.persons[person].visitStartWall = engine.wallClock.wallMilliseconds(at: Instant(nanoseconds: now))
            engine.persons[person].decidingTag = signal.tag
            engine.persons[person].waitingReported = false
            engine.setState(person: person, to: .present, at: now, into: &events)
            let series = engine.series(slot: Int(signal.tag), now: now)
            engine.counters.checkins &+= 1
            events.append(.checkin(engine.decision(person: person, tag: Int(signal.tag), timestamp: now, decidedAt: now,
                                                   series: series, handshake: handshake)))
        case .present:
            guard signal.rssi <= engine.limits.exit else { return }
            engine.beginUnconfirmed(person: person, tag: signal.tag, at: now, into: &events)
        case .unconfirmed:
            guard signal.rssi > engine.limits.enter else { return }
            engine.persons[person].unconfirmedSince = PresenceEngine.never
            engine.persons[person].unconfirmedSeries = []
            engine.setState(person: person, to: .present, at: now, into: &events)
        case .outside:
            return
        }
    }
}
