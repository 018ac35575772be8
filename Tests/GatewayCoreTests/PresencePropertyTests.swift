import AttendanceEvents
import EventLoop
import HCI
import XCTest
@testable import GatewayCore
import AdvertisingFixtures
import SplitMix

/// Thousands of seeded random trajectories — random walks of signal strength, lost
/// reports, long gaps, proofs, reloads of the same configuration, clean restarts and
/// crashes — checked against the invariants of docs/presence.md and docs/event-api.md on the events an
/// outbox would hold.
final class PresencePropertyTests: XCTestCase {
    struct StoredEvent {
        var sequence: Int64
        var type: AttendanceEventType
        var personId: String
        var visitStart: Int64
        var timestamp: Int64
        var decidedAt: Int64
        var key: String
    }

    /// What the agent and its store would do: events and records committed together.
    struct SimulatedStore {
        var outbox: [StoredEvent] = []
        var records: [String: [UInt8]] = [:]
        var nextSequence: Int64 = 1

        mutating func commit(_ events: [PresenceEvent], engine: PresenceEngine) {
            for event in events {
                guard let body = AttendanceEvent(event, gateway: GatewayIdentity(id: "door-1"), sequence: nextSequence,
                                                 identities: [], appVersion: "test", id: "-")
                else { continue }
                nextSequence += 1
                outbox.append(StoredEvent(sequence: body.sequence, type: body.type, personId: body.userId,
                                          visitStart: body.visitStartMilliseconds, timestamp: body.timestampMilliseconds,
                                          decidedAt: body.decidedAtMilliseconds, key: body.idempotencyKey))
                if let record = engine.record(for: body.userId) { records[body.userId] = record.encode() }
            }
        }
    }

    func testRandomTrajectoriesKeepTheInvariants() {
        var totals = (checkins: 0, checkouts: 0, restarts: 0, samples: 0)
        for seed in UInt64(1) ... 2000 {
            let result = runTrajectory(seed: seed)
            totals.checkins += result.checkins
            totals.checkouts += result.checkouts
            totals.restarts += result.restarts
            totals.samples += result.samples
            if result.failed { return }
        }
        // The trajectories must actually exercise visits and restarts.
        XCTAssertGreaterThan(totals.checkins, 2000)
        XCTAssertGreaterThan(totals.restarts, 1000)
        XCTAssertEqual(totals.checkins, totals.checkouts, "after the final silence every visit is closed")
    }

    func runTrajectory(seed: UInt64) -> (checkins: Int, checkouts: Int, restarts: Int, samples: Int, failed: Bool) {
        var rng = SplitMix64(seed: seed)
        func random(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }
        func chance(_ percent: Int) -> Bool { Int(rng.next() % 100) < percent }

        var settings = PresenceSettings()
        settings.window = .milliseconds(random(500 ... 5000))
        settings.minSamples = random(1 ... 3)
        settings.lostAfter = .seconds(random(3 ... 15))
        settings.leaveAfter = .seconds(random(5 ... 120))
        settings.awayAfter = .seconds(random(5 ... 60))
        settings.proofTTL = .seconds(random(10 ... 300))
        settings.samplesPerTag = random(1 ... 16)

        var persons: [PresencePerson] = []
        var tagIndex = 0
        for p in 0 ..< random(1 ... 3) {
            var tags: [PresenceTag] = []
            for _ in 0 ..< random(1 ... 2) {
                tags.append(PresenceTag(index: tagIndex, id: "t\(tagIndex)"))
                tagIndex += 1
            }
            persons.append(PresencePerson(id: "p\(p)", requireProof: chance(25), tags: tags))
        }
        var rssi = persons.map { _ in random(-100 ... -45) }

        var wall: Int64 = 1_700_000_000_000 + Int64(random(0 ... 1_000_000))
        var bootOffset = Int64(random(0 ... 1_000_000)) * 1_000_000
        var monotonicMs: Int64 = 0
        func instant() -> Instant { Instant(nanoseconds: bootOffset + monotonicMs * 1_000_000) }
        var engine = PresenceEngine(settings: settings, persons: persons,
                                    wallClock: WallClockMapping(anchor: instant(), wallMilliseconds: wall))
        var store = SimulatedStore()
        var restarts = 0
        var samples = 0

        for _ in 0 ..< 300 {
            // Time passes: mostly report intervals, sometimes a long silence.
            let step = chance(3) ? random(5_000 ... 400_000) : random(100 ... 1500)
            monotonicMs += Int64(step)
            wall += Int64(step)
            if chance(50) {
                store.commit(engine.advance(to: instant()), engine: engine)
            } else {
                // An exact driver: every deadline on time.
                while let deadline = engine.nextDeadline, deadline <= instant() {
                    store.commit(engine.advance(to: deadline), engine: engine)
                }
            }
            for (p, person) in persons.enumerated() {
                rssi[p] = min(-40, max(-105, rssi[p] + random(-4 ... 4)))
                for tag in person.tags where chance(70) {
                    samples += 1
                    let events = engine.sample(tagIndex: tag.index, rssi: rssi[p] + random(-5 ... 5),
                                               address: BluetoothAddress(rawValue: UInt64(tag.index + 1)),
                                               addressType: .randomDevice, txPower: chance(50) ? -59 : nil, at: instant())
                    store.commit(events, engine: engine)
                }
                if person.requireProof, chance(5), let tag = person.tags.first {
                    store.commit(engine.proofSucceeded(tagIndex: tag.index, at: instant(), roundTripMilliseconds: random(50 ... 400)),
                                 engine: engine)
                }
            }
            if chance(1) {
                store.commit(engine.reconfigure(settings: settings, persons: persons, at: instant()), engine: engine)
            }
            if chance(2) {
                // Restart: clean (records checkpointed now) or a crash (only the records
                // committed with events). The new boot's monotonic clock starts elsewhere.
                restarts += 1
                let clean = chance(50)
                let records: [PersistedPresence] = clean
                    ? engine.records
                    : store.records.values.compactMap(PersistedPresence.init(decoding:))
                let downtime = Int64(random(0 ... 600_000))
                wall += downtime
                bootOffset = Int64(random(0 ... 1_000_000)) * 1_000_000 - monotonicMs * 1_000_000
                engine = PresenceEngine(settings: settings, persons: persons)
                engine.restore(records: records.map { PersistedPresence(decoding: $0.encode())! }, now: instant(), wallNow: wall)
                if !check(store, engine: engine, persons: persons, seed: seed) { return (0, 0, 0, 0, true) }
            }
        }
        // Final silence: every open visit must end with its checkout.
        monotonicMs += 10_000_000
        wall += 10_000_000
        store.commit(engine.advance(to: instant()), engine: engine)
        let failed = !check(store, engine: engine, persons: persons, seed: seed)
        let checkins = store.outbox.filter { $0.type == .checkin }.count
        return (checkins, store.outbox.count - checkins, restarts, samples, failed)
    }

    /// The invariants; false (after reporting) on the first violation.
    func check(_ store: SimulatedStore, engine: PresenceEngine, persons: [PresencePerson], seed: UInt64) -> Bool {
        let sequences = store.outbox.map(\.sequence)
        guard sequences == Array(stride(from: Int64(1), through: Int64(sequences.count), by: 1)) else {
            XCTFail("seed \(seed): sequence not gap-free: \(sequences)")
            return false
        }
        var keys = Set<String>()
        for event in store.outbox {
            guard keys.insert(event.key).inserted else {
                XCTFail("seed \(seed): idempotency key repeated for \(event.personId) \(event.type) \(event.visitStart)")
                return false
            }
        }
        for person in persons {
            var openVisit: Int64?
            for event in store.outbox where event.personId == person.id {
                switch event.type {
                case .checkin:
                    guard openVisit == nil else {
                        XCTFail("seed \(seed): \(person.id) checked in twice for one visit")
                        return false
                    }
                    guard event.timestamp == event.visitStart else {
                        XCTFail("seed \(seed): checkin timestamp is not the visit start")
                        return false
                    }
                    openVisit = event.visitStart
                case .checkout:
                    guard openVisit == event.visitStart else {
                        XCTFail("seed \(seed): \(person.id) checkout of visit \(event.visitStart) without its checkin (open: \(String(describing: openVisit)))")
                        return false
                    }
                    guard event.visitStart <= event.timestamp, event.timestamp <= event.decidedAt else {
                        XCTFail("seed \(seed): checkout times out of order: \(event)")
                        return false
                    }
                    openVisit = nil
                default:
                    XCTFail("unexpected type \(event.type)")
                    return false
                }
            }
            guard (openVisit != nil) == (engine.state(of: person.id)?.hasOpenVisit ?? false) else {
                XCTFail("seed \(seed): \(person.id) engine state \(String(describing: engine.state(of: person.id))) disagrees with the outbox")
                return false
            }
        }
        // The status line's count is kept as states change: it must match a recount.
        let recounted = persons.filter { engine.state(of: $0.id)?.hasOpenVisit ?? false }.count
        guard engine.openVisits == recounted else {
            XCTFail("seed \(seed): openVisits \(engine.openVisits), recounted \(recounted)")
            return false
        }
        return true
    }
}
