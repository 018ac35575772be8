import PresenceProof
import SplitMix
import XCTest
@testable import GatewayCore

/// Sighting reports on the bus (docs/neighbours.md): their bytes, their signature, and
/// every refusal of the verifier, by its reason; mutated encodings never crash it.
final class SightingReportTests: XCTestCase {
    let keys = SightingKeys(masterKey: MasterKey(bytes: Array(repeating: 0x5A, count: 32))!)
    let otherKeys = SightingKeys(masterKey: MasterKey(bytes: Array(repeating: 0x5B, count: 32))!)
    let wall: Int64 = 1_789_012_345_678

    var report: SightingReport {
        SightingReport(sender: "door-b", wallMilliseconds: wall, sightings: [
            .init(person: keys.personHash("u_1001"), rssi: -67, holds: true),
            .init(person: keys.personHash("u_1002"), rssi: -88, holds: false, passageConfirmed: true),
        ])
    }

    var verifier: SightingVerifier { SightingVerifier(keys: keys, ownId: "door-a", neighbours: .doors(["door-b"])) }

    func testARoundTripKeepsEverything() throws {
        let bytes = report.encoded(keys: keys)
        XCTAssertEqual(bytes.count, 3 + 1 + 1 + 6 + 8 + 2 + 2 * 10 + 32)
        XCTAssertEqual(Array(bytes.prefix(4)), Array("BGS".utf8) + [2])
        XCTAssertEqual(try verifier.verify(bytes, wallNow: wall + 500).get(), report)
        let heartbeat = SightingReport(sender: "door-b", wallMilliseconds: wall, sightings: [])
        XCTAssertTrue(try verifier.verify(heartbeat.encoded(keys: keys), wallNow: wall).get().isHeartbeat)
    }

    /// An earlier door's reports (version 1) are still read, with bit 0 of the flags only:
    /// doors upgraded one after another go on hearing the ones not yet upgraded.
    func testAnEarlierDoorsReportIsStillRead() throws {
        let earlier = SightingReport(sender: "door-b", wallMilliseconds: wall, sightings: [
            .init(person: keys.personHash("u_1001"), rssi: -67, holds: true),
        ], wireVersion: 1)
        func signedAsVersionOne(flags: UInt8) -> [UInt8] {
            var body = Array(earlier.encoded(keys: keys).dropLast(32))
            XCTAssertEqual(body[3], 1)
            body[body.count - 1] = flags
            return body + keys.signature(of: body[...])
        }
        XCTAssertEqual(try verifier.verify(signedAsVersionOne(flags: 0x01), wallNow: wall).get(), earlier)
        guard case .failure(.malformed) = verifier.verify(signedAsVersionOne(flags: 0x03), wallNow: wall) else {
            return XCTFail("bit 1 in a version 1 report")
        }
    }

    func testThePersonTravelsAsAKeyedHashOnly() {
        let bytes = report.encoded(keys: keys)
        XCTAssertNil(bytes.firstRange(of: Array("u_1001".utf8)))
        XCTAssertNotEqual(keys.personHash("u_1001"), otherKeys.personHash("u_1001"), "another site, another name")
        XCTAssertNotEqual(keys.personHash("u_1001"), keys.personHash("u_1002"))
        XCTAssertEqual(keys.personHash("u_1001"), keys.personHash("u_1001"))
        XCTAssertEqual("\(keys)", "SightingKeys(********)")
    }

    func testEachRefusalHasItsReason() {
        let bytes = report.encoded(keys: keys)
        func refusal(_ payload: [UInt8], wallNow: Int64? = nil, verifier: SightingVerifier? = nil) -> SightingRefusal? {
            guard case let .failure(reason) = (verifier ?? self.verifier).verify(payload, wallNow: wallNow ?? wall) else { return nil }
            return reason
        }
        XCTAssertNil(refusal(bytes))
        XCTAssertEqual(refusal(report.encoded(keys: otherKeys)), .forged, "another site's key")
        var altered = bytes
        altered[3 + 1 + 1 + 6 + 8 + 2 + 8] = UInt8(bitPattern: -40)
        XCTAssertEqual(refusal(altered), .forged, "a stronger RSSI written in")
        XCTAssertEqual(refusal(Array(bytes.dropLast(32)) + Array(repeating: 0, count: 32)), .forged, "unsigned")
        XCTAssertEqual(refusal(bytes, wallNow: wall + 3001), .stale)
        XCTAssertNil(refusal(bytes, wallNow: wall + 3000), "3 s old still counts")
        XCTAssertEqual(refusal(bytes, wallNow: wall - 3001), .ahead)
        XCTAssertEqual(refusal(bytes, verifier: SightingVerifier(keys: keys, ownId: "door-a", neighbours: .doors(["door-c"]))),
                       .notANeighbour)
        XCTAssertNil(refusal(bytes, verifier: SightingVerifier(keys: keys, ownId: "door-a", neighbours: .anyDoorOfSite)))
        XCTAssertEqual(refusal(bytes, verifier: SightingVerifier(keys: keys, ownId: "door-b", neighbours: .anyDoorOfSite)),
                       .ownReport)
        XCTAssertEqual(refusal(Array(bytes.dropLast())), .malformed)
        XCTAssertEqual(refusal(bytes + [0]), .malformed)
        XCTAssertEqual(refusal([]), .malformed)
        XCTAssertEqual(refusal(Array(repeating: 0x42, count: SightingReport.maximumBytes + 1)), .malformed)
        var flags = bytes
        flags[3 + 1 + 1 + 6 + 8 + 2 + 9] = 0x04
        XCTAssertEqual(refusal(flags), .malformed, "unknown flags")
        XCTAssertEqual(bytes[3 + 1 + 1 + 6 + 8 + 2 + 9], 0x01, "holds")
        XCTAssertEqual(bytes[3 + 1 + 1 + 6 + 8 + 2 + 10 + 9], 0x02, "the sender confirmed a passage through its doorway")
    }

    /// Random mutations of valid reports (bytes flipped, cut, inserted, lengths rewritten):
    /// the verifier answers every one, and only an unchanged report passes.
    func testMutatedReportsNeverCrashTheVerifier() {
        var random = SplitMix64(seed: 0x5167)
        let verifier = SightingVerifier(keys: keys, ownId: "door-a", neighbours: .anyDoorOfSite)
        var passed = 0
        for round in 0 ..< 20_000 {
            let count = Int(random.next() % 6)
            let sightings = (0 ..< count).map { _ in
                SightingReport.Sighting(person: PersonHash(rawValue: random.next()), rssi: Int8(truncatingIfNeeded: random.next()),
                                        holds: random.next() & 1 == 0)
            }
            let original = SightingReport(sender: "door-\(round % 7)", wallMilliseconds: wall, sightings: sightings)
                .encoded(keys: keys)
            var bytes = original
            for _ in 0 ..< 1 + Int(random.next() % 4) {
                switch random.next() % 5 {
                case 0 where !bytes.isEmpty: bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                case 1 where !bytes.isEmpty: bytes.removeLast(Int(random.next() % UInt64(bytes.count)) + 1)
                case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(bytes.count + 1)))
                case 3 where bytes.count > 5: bytes[4] = UInt8(truncatingIfNeeded: random.next())
                default: if bytes.count > 20 { bytes[19] = UInt8(truncatingIfNeeded: random.next()) }
                }
            }
            if case .success = verifier.verify(bytes, wallNow: wall) {
                passed += 1
                XCTAssertEqual(bytes, original, "only an unchanged report passes")
            }
        }
        XCTAssertLessThan(passed, 200)
    }
}
