import AttendanceEvents
import EventLoop
import XCTest
@testable import GatewayCore

/// A day at two neighbouring doors in virtual time (`TwoRoomsWorld`): the rule of
/// docs/neighbours.md checks in nobody at the wrong door, hands movers over within
/// `handover_s` + 2 s, misses no stay of 10 s; and the same people at one door without
/// neighbours are decided exactly as before.
final class NeighbourDayTests: XCTestCase {
    /// The rooms' thresholds: everyone seated in a room is above `enter_rssi` at its door,
    /// and a seat by the shared wall is above it at the other door too (the problem).
    static let settings = PresenceSettings(enterRSSI: -78, exitRSSI: -84, leaveAfter: .seconds(60), awayAfter: .seconds(60))

    typealias P = TwoRoomsWorld.Point

    /// Seats by the shared wall (0.4 m from it), at the back, and in the middle of each room.
    static let wallA = [P(x: 5.6, y: 1.5), P(x: 5.6, y: 2.5), P(x: 5.6, y: 3.5)]
    static let wallB = [P(x: 6.4, y: 1.5), P(x: 6.4, y: 2.5), P(x: 6.4, y: 3.5)]
    static let backA = P(x: 1.5, y: 4.5), backB = P(x: 10.5, y: 4.5)
    static let middleA = P(x: 3.5, y: 2.5), middleB = P(x: 8.5, y: 2.5)
    /// In the corridor, between the two doorways.
    static let corridor = P(x: 6.0, y: -1.0)

    static func plans() -> [[TwoRoomsWorld.Step]] {
        [
            // By the wall in A, with breaks.
            [.sit(wallA[0], seconds: 3000), .away(seconds: 600), .sit(wallA[1], seconds: 2400), .away(seconds: 300)],
            [.sit(wallA[2], seconds: 3600), .away(seconds: 900)],
            // By the wall in B.
            [.away(seconds: 120), .sit(wallB[1], seconds: 2700), .away(seconds: 600), .sit(wallB[0], seconds: 1800)],
            [.sit(wallB[2], seconds: 4000), .away(seconds: 500)],
            // At the back and in the middle.
            [.sit(backA, seconds: 1800), .sit(middleA, seconds: 1200), .away(seconds: 400)],
            [.sit(backB, seconds: 2000), .away(seconds: 300), .sit(middleB, seconds: 900)],
            // Moving between the rooms, wall seat to wall seat.
            [.sit(wallA[1], seconds: 900), .sit(wallB[1], seconds: 600), .sit(middleA, seconds: 300), .sit(backB, seconds: 1200)],
            [.sit(middleB, seconds: 120), .sit(middleA, seconds: 90), .sit(wallB[2], seconds: 240), .sit(wallA[0], seconds: 45),
             .away(seconds: 200)],
            // Along the corridor, past both doorways, and standing between them.
            [.walk(to: P(x: 14, y: -1)), .walk(to: P(x: -3, y: -1)), .sit(corridor, seconds: 120), .away(seconds: 300),
             .sit(middleA, seconds: 30), .walk(to: P(x: 14, y: -1)), .sit(wallB[1], seconds: 20), .away(seconds: 60)],
            // Short visits to either room.
            [.sit(middleA, seconds: 15), .away(seconds: 240), .sit(wallB[0], seconds: 12), .sit(backA, seconds: 600),
             .away(seconds: 400)],
        ]
    }

    /// The day's world: `wallDB` the wall's loss, `marginDB` the doors' `margin_db` (the
    /// installer sets it about the wall's loss: docs/neighbours.md).
    static func makeWorld(seed: UInt64, neighbours: Bool, wallDB: Double = 6, marginDB: Double = 6) -> TwoRoomsWorld {
        let count = Self.plans().count
        let setups: [DoorSetup] = neighbours
            ? [DoorHarness.neighbourSetup(persons: count, id: "door-a", neighbours: .doors(["door-b"]), settings: Self.settings,
                                          marginDB: marginDB),
               DoorHarness.neighbourSetup(persons: count, id: "door-b", neighbours: .doors(["door-a"]), settings: Self.settings,
                                          marginDB: marginDB)]
            : [DoorHarness.setup(persons: count, settings: Self.settings), DoorHarness.setup(persons: count, settings: Self.settings)]
        var world = TwoRoomsWorld(seed: seed, persons: Self.plans(), setups: setups, wallDB: wallDB)
        world.marginDB = marginDB
        world.enterRSSI = Double(Self.settings.enterRSSI)
        return world
    }

    /// Hours simulated (`BEACON_GATEWAY_ROOMS_HOURS` for a longer run).
    static var hours: Double {
        guard let text = getenv("BEACON_GATEWAY_ROOMS_HOURS"), let hours = Double(String(cString: text)) else { return 3 }
        return hours
    }

    /// The seeds of the day (`BEACON_GATEWAY_ROOMS_SEEDS`, comma-separated, for more).
    static var seeds: [UInt64] {
        guard let text = getenv("BEACON_GATEWAY_ROOMS_SEEDS") else { return [0x51_6E] }
        return String(cString: text).split(separator: ",").compactMap { UInt64($0.trimmingPrefix("0x"), radix: $0.hasPrefix("0x") ? 16 : 10) }
    }

    /// docs/neighbours.md's goal, on every seed: no checkin at the wrong door while the
    /// neighbour is alive, never both doors holding one person longer than `handover_s` +
    /// 2 s, no stay of 10 s or more missed; and the same day without neighbours shows the
    /// problem. All three hold on the six seeds measured (6 h of 0x516E, 1–3, 10 and 11)
    /// since a mover's passage is also confirmed by the lead's swing (tenth round; before,
    /// seed 3 missed one stay); not on every other seed (docs/neighbours.md, "Status"). The
    /// handover's median and p95 are bounded by the worst of those six and of the 3 h that
    /// `swift test` runs, so that they get no worse; the printed figures say how far they are from `handover_s` + 2 s, beside the
    /// same rule on the signal without the reports' noise (`TwoRoomsWorld.referenceTaking`):
    /// a median of 6.7 s and a p95 of 12.7 s (0x516E's 3 h; twelfth round, a checkin
    /// reported at once; the eleventh on the same world 7.1 s and 13.2 s, the tenth 7.1 s
    /// and 16.2 s on the world before, ninth 7.1 s and 21.3 s, eighth 8.0 s and 36.2 s).
    func testADayAtTwoNeighbouringDoors() {
        let seconds = Self.hours * 3600
        for (number, seed) in Self.seeds.enumerated() {
            var world = Self.makeWorld(seed: seed, neighbours: true)
            // Door B dies for ten minutes a third of the way through, and comes back.
            world.run(seconds: seconds, killB: seconds / 3 ... seconds / 3 + 600)
            let figures = world.figures()
            print("neighbours, seed \(seed): \(figures)")
            for line in figures.wrongDoorCheckins + figures.missedStays { print("  \(line)") }
            XCTAssertEqual(figures.wrongDoorCheckins.count, 0, "seed \(seed)")
            XCTAssertLessThanOrEqual(figures.longestDoubleVisit, 5 + 2, "seed \(seed): \(figures.longestDoubleVisitWhere)")
            XCTAssertEqual(figures.missedStays.count, 0, "seed \(seed)")
            // Times are on the world's 0.1 s steps: half a step for their sums' rounding.
            XCTAssertLessThanOrEqual(figures.handover(0.5), 6.7 + 0.05,
                                     "seed \(seed): half the movers handed over within 6.7 s of entering")
            XCTAssertLessThanOrEqual(figures.handover(0.95), 12.7 + 0.05,
                                     "seed \(seed): 95 % of the movers handed over within 12.7 s of entering")
            XCTAssertGreaterThan(figures.moved, 10, "movers are handed over")
            XCTAssertGreaterThan(world.doors[0].core.sightings.taken, 1000)
            XCTAssertEqual(world.doors[0].core.sightings.refused.filter { $0.key != .ownReport }, [:])
            guard number == 0 else { continue }
            var alone = Self.makeWorld(seed: seed, neighbours: false)
            alone.run(seconds: seconds)
            let aloneFigures = alone.figures()
            print("alone, seed \(seed): \(aloneFigures)")
            XCTAssertGreaterThan(aloneFigures.wrongDoorCheckins.count, 20, "the world shows the problem")
            XCTAssertTrue(alone.doors[0].published.isEmpty && alone.doors[0].core.sightings.published == 0)
        }
    }

    /// The rule without the reports' noise that the figures print beside the doors':
    /// `margin_db` for `handover_s`, or the stronger for 10 s, each above `enter_rssi`.
    func testTheReferenceIsTheRuleOnTheMeanSignal() {
        var world = Self.makeWorld(seed: 1, neighbours: true)
        func taking(lead: [Float], own: Float) -> Int? {
            world.meanLeads = [Array(repeating: 0, count: 300)]
            world.meanOwn = [Array(repeating: own, count: 300)]
            for index in 0 ..< 300 { world.meanLeads[0][index] = lead[index % lead.count] }
            return world.referenceTaking(0, from: 0, to: 300)
        }
        XCTAssertEqual(taking(lead: [7], own: -70), 50, "the margin for handover_s")
        XCTAssertEqual(taking(lead: [3], own: -70), 100, "the stronger for 10 s")
        XCTAssertNil(taking(lead: [3], own: -80), "below enter_rssi: nobody")
        XCTAssertNil(taking(lead: Array(repeating: 7, count: 40) + [-1], own: -70), "a lead that breaks starts over")
        // The same rule at the other door: it hears them at `own` − `lead`.
        func wrongDoor(lead: [Float], own: Float, taken: Int?) -> Bool {
            world.meanLeads = [lead + Array(repeating: lead.last!, count: 300 - lead.count)]
            world.meanOwn = [Array(repeating: own, count: 300)]
            return world.referenceWrongDoor(0, from: 0, to: 300, taken: taken)
        }
        XCTAssertTrue(wrongDoor(lead: [-1], own: -70, taken: nil), "the other door the stronger for 10 s, nobody took them")
        XCTAssertFalse(wrongDoor(lead: [-1], own: -70, taken: 99), "their door took them first: the other needs the margin")
        XCTAssertTrue(wrongDoor(lead: Array(repeating: 8, count: 60) + [-7], own: -70, taken: 50), "the margin for handover_s")
        XCTAssertFalse(wrongDoor(lead: [-1], own: -80, taken: nil), "below enter_rssi at the other door: nobody")
        XCTAssertFalse(wrongDoor(lead: [1], own: -70, taken: nil), "their own door the stronger")
    }

    /// `scripts/bench-rooms`: the same day for several walls (`BEACON_GATEWAY_ROOMS_WALLS`,
    /// dB, comma-separated; `margin_db` the wall's loss, at least the default 6) and the
    /// seeds, beside the same world deciding alone, as a table. Skipped without the
    /// variable.
    func testBenchRooms() throws {
        guard let text = getenv("BEACON_GATEWAY_ROOMS_WALLS") else { throw XCTSkip("BEACON_GATEWAY_ROOMS_WALLS not set") }
        let walls = String(cString: text).split(separator: ",").compactMap { Double($0) }
        let seconds = Self.hours * 3600
        print("bench-rooms: \(Self.seeds.count) seeds × \(tenths(Self.hours)) h, door B dead for 10 min a third of the way through")
        print("| wall dB | margin_db | doors | checkins | wrong door | wrong door, neighbour dead | stays ≥ 10 s missed | "
            + "handover p50 / p95 / max s (n) | longest double visit s | without the reports' noise: missed, wrong door, handover p50 / p95 s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for wall in walls {
            for neighbours in [false, true] {
                var all = TwoRoomsWorld.Figures()
                for seed in Self.seeds {
                    var world = Self.makeWorld(seed: seed, neighbours: neighbours, wallDB: wall, marginDB: max(wall, 6))
                    world.run(seconds: seconds, killB: seconds / 3 ... seconds / 3 + 600)
                    let figures = world.figures()
                    all.checkins += figures.checkins
                    all.wrongDoorCheckins += figures.wrongDoorCheckins.map { "seed \(seed): \($0)" }
                    all.aloneWrongDoorCheckins += figures.aloneWrongDoorCheckins
                    all.stays += figures.stays
                    all.missedStays += figures.missedStays.map { "seed \(seed): \($0)" }
                    all.handovers += figures.handovers
                    all.referenceHandovers += figures.referenceHandovers
                    all.referenceMissedStays += figures.referenceMissedStays
                    all.referenceWrongDoorStays += figures.referenceWrongDoorStays
                    if figures.longestDoubleVisit > all.longestDoubleVisit {
                        all.longestDoubleVisit = figures.longestDoubleVisit
                    }
                }
                let handover = neighbours
                    ? "\(tenths(all.handover(0.5))) / \(tenths(all.handover(0.95))) / \(tenths(all.handover(1))) (\(all.handovers.count))" : "–"
                print("| \(tenths(wall)) | \(neighbours ? tenths(max(wall, 6)) : "–") | \(neighbours ? "neighbours" : "alone") | \(all.checkins) | "
                    + "\(all.wrongDoorCheckins.count) | \(all.aloneWrongDoorCheckins) | \(all.missedStays.count) of \(all.stays) | "
                    + "\(handover) | \(tenths(all.longestDoubleVisit)) | "
                    + (neighbours ? "\(all.referenceMissedStays), \(all.referenceWrongDoorStays), \(tenths(all.referenceHandover(0.5))) / \(tenths(all.referenceHandover(0.95))) |" : "– |"))
                if neighbours {
                    for line in all.wrongDoorCheckins + all.missedStays { print("  wall \(tenths(wall)): \(line)") }
                }
            }
        }
    }
}
