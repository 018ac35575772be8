import EventLoop
import PresenceProof
import XCTest
@testable import GatewayCore

/// What a door says of its neighbours (`DoorCore.neighbourStatus`, docs/neighbours.md) and
/// what an installer's command reads of them (`NeighbourSightingsHeard`, docs/cli.md).
final class NeighbourVisibilityTests: XCTestCase {
    let keys = SightingKeys(masterKey: MasterKey(bytes: Array(repeating: 0x5A, count: 32))!)

    func testTheStatusSaysWhichNeighbourIsHeardAndSinceWhen() throws {
        var a = DoorHarness(DoorHarness.neighbourSetup(persons: 1, id: "door-a", neighbours: .doors(["door-b", "door-c"]),
                                                       settings: DoorHarness.settings))
        var status = try XCTUnwrap(a.core.neighbourStatus(at: a.now))
        XCTAssertEqual(status.doors.map(\.id), ["door-b", "door-c"])
        XCTAssertEqual(status.doors.map(\.heardAgo), [nil, nil])
        XCTAssertEqual(status.heard, 0)
        let report = SightingReport(sender: "door-b", wallMilliseconds: a.wall, sightings: []).encoded(keys: keys)
        a.perform(a.core.neighbourSighting(report, at: a.now))
        a.advance(seconds: 4)
        status = try XCTUnwrap(a.core.neighbourStatus(at: a.now))
        XCTAssertEqual(status.doors[0].heardAgo, .seconds(4))
        XCTAssertEqual(status.doors.map(\.heard), [true, false])
        XCTAssertEqual(status.heard, 1)
        a.advance(seconds: 7)
        status = try XCTUnwrap(a.core.neighbourStatus(at: a.now))
        XCTAssertEqual(status.doors[0].heardAgo, .seconds(11))
        XCTAssertEqual(status.heard, 0, "silent after 10 s")
        XCTAssertNil(DoorHarness(DoorHarness.setup(persons: 1)).core.neighbourStatus(at: .zero))
    }

    func testAnInstallersCommandTakesWhatTheDoorWouldAndKeepsTheLatestPerNeighbour() {
        let wall: Int64 = 1_789_012_345_678
        var heard = NeighbourSightingsHeard(keys: keys, ownId: "door-a", neighbours: .doors(["door-b", "door-c"]),
                                            personIds: ["u_1", "u_2"])
        func report(_ sender: String, _ at: Int64, _ sightings: [(String, Int8, Bool)], keys: SightingKeys? = nil) -> [UInt8] {
            SightingReport(sender: sender, wallMilliseconds: at, sightings: sightings.map {
                .init(person: self.keys.personHash($0.0), rssi: $0.1, holds: $0.2)
            }).encoded(keys: keys ?? self.keys)
        }
        guard case let .success(named) = heard.take(report("door-b", wall, [("u_1", -80, false), ("stranger", -50, true)]),
                                                     wallNow: wall + 100) else { return XCTFail("taken") }
        XCTAssertEqual(named.map(\.personId), ["u_1"], "a person not configured here is not named")
        _ = heard.take(report("door-c", wall + 200, [("u_1", -70, true)]), wallNow: wall + 300)
        XCTAssertEqual(heard.heard(personId: "u_1", wallNow: wall + 400).map { "\($0.neighbour) \($0.rssi) \($0.holds)" },
                       ["door-c -70 true", "door-b -80 false"], "strongest first")
        XCTAssertEqual(heard.heard(personId: "u_1", wallNow: wall + 3100).map(\.neighbour), ["door-c"], "door-b's is 3 s old")
        XCTAssertEqual(heard.heard(personId: "u_2", wallNow: wall), [])
        // Refused as the door refuses them: replayed, forged, from a stranger, malformed.
        func refusal(_ result: Result<[(personId: String, heard: NeighbourSightingsHeard.Heard)], SightingRefusal>) -> SightingRefusal? {
            if case let .failure(reason) = result { reason } else { nil }
        }
        XCTAssertEqual(refusal(heard.take(report("door-b", wall, [("u_1", -40, true)]), wallNow: wall + 500)), .replayed)
        let other = SightingKeys(masterKey: MasterKey(bytes: Array(repeating: 0x5B, count: 32))!)
        XCTAssertEqual(refusal(heard.take(report("door-b", wall + 600, [("u_1", -40, true)], keys: other), wallNow: wall + 600)),
                       .forged)
        XCTAssertEqual(refusal(heard.take(report("door-z", wall + 600, []), wallNow: wall + 600)), .notANeighbour)
        XCTAssertEqual(refusal(heard.take([0x42, 0x47, 0x53], wallNow: wall)), .malformed)
        XCTAssertEqual(heard.heard(personId: "u_1", wallNow: wall + 700).first?.rssi, -70, "none of them counted")
        XCTAssertEqual(heard.taken, 2)
        XCTAssertEqual(heard.refused, [.replayed: 1, .forged: 1, .notANeighbour: 1, .malformed: 1])
    }

    func testCalibrateSaysByHowMuchThisDoorLeadsEachNeighbour() throws {
        let report = try XCTUnwrap(CalibrationReport(rssi: Array(repeating: -60, count: 30), timesNanoseconds: []))
        let text = report.renderNeighbours(["door-b": [-70, -72, -71], "door-c": [-63], "door-d": [-55]],
                                           neighbours: ["door-b", "door-c", "door-d", "door-e"], marginDB: 6, busReached: true)
        XCTAssertEqual(text, """
        neighbours (what each heard of the same person meanwhile; this door must lead by margin_db = 6 dB):
          door-b: median -71 dBm over 3 reports; this door leads by 11 dB: this door takes them here
          door-c: median -63 dBm over 1 reports; this door leads by 3 dB: under the margin: taken here only after 10 s as the strongest, and fading may flip them
          door-d: median -55 dBm over 1 reports; this door leads by -5 dB: door-d hears them better: it takes them, not this door
          door-e: did not report this person (does not hear them above its exit_rssi - 10 dB, or is silent)

        """)
        XCTAssertEqual(report.renderNeighbours([:], neighbours: ["door-b"], marginDB: 6, busReached: false),
                       "neighbours: the site bus could not be reached; nothing is known of what they hear\n")
    }
}
