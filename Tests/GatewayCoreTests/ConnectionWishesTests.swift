import EventLoop
import HCI
import XCTest
@testable import GatewayCore

final class ConnectionWishesTests: XCTestCase {
    /// A door of `persons` persons with one tag each (tag index = person number): even
    /// persons require a proof, every third is connection-tracked, and the tests drive
    /// engine and wishes the way the agent does.
    struct Door {
        var engine: PresenceEngine
        var wishes: ConnectionWishes
        var book = ProofBook()
        let clock = ManualClock()
        var changes: [ConnectionWishes.Change] = []

        init(persons count: Int) {
            var persons: [PresencePerson] = []
            var tags: [Int: ConnectionWishes.Tag] = [:]
            for n in 0 ..< count {
                let requireProof = n % 2 == 0
                let tracked = n % 3 == 0
                persons.append(PresencePerson(id: "p\(n)", requireProof: requireProof, tags: [PresenceTag(index: n, id: "t\(n)")]))
                if requireProof || tracked {
                    tags[n] = ConnectionWishes.Tag(tagId: "t\(n)", personId: "p\(n)", requireProof: requireProof, tracked: tracked,
                                                   hasKey: true, configuredPeer: nil)
                }
            }
            engine = PresenceEngine(settings: PresenceSettings(), persons: persons)
            wishes = ConnectionWishes(tags: tags)
        }

        static func address(_ n: Int) -> BluetoothAddress { BluetoothAddress(rawValue: 0x40_00_00_00_00_00 | UInt64(n)) }

        /// One report of person `n`'s tag, then the wishes brought up to date (per batch of one).
        mutating func report(_ n: Int, rssi: Int, at seconds: Double) {
            let now = Instant(nanoseconds: Int64(seconds * 1e9))
            if now > clock.now { clock.advance(to: now) }
            handle(engine.advance(to: now))
            handle(engine.sample(tagIndex: n, rssi: rssi, address: Self.address(n), addressType: .randomDevice, txPower: nil, at: now))
            wishes.heard(tagIndex: n, address: Self.address(n), addressType: .randomDevice, at: now)
            changes += wishes.update(presence: engine, book: book, now: now)
        }

        mutating func proved(_ n: Int, at seconds: Double) {
            let now = Instant(nanoseconds: Int64(seconds * 1e9))
            book.recordSuccess(tag: "t\(n)", handles: .init(challenge: 1, response: 2), roundTripMilliseconds: 40, now: now)
            handle(engine.proofSucceeded(tagIndex: n, at: now, roundTripMilliseconds: 40))
            wishes.personChanged("p\(n)")
            changes += wishes.update(presence: engine, book: book, now: now)
        }

        mutating func handle(_ events: [PresenceEvent]) {
            for case let .stateChanged(personId, _, _, _) in events { wishes.personChanged(personId) }
        }
    }

    func testAProofPersonWantsAConnectionUntilProven() {
        var door = Door(persons: 4)
        _ = door.wishes.update(presence: door.engine, book: door.book, now: .zero)
        door.report(2, rssi: -60, at: 1)
        XCTAssertEqual(door.changes, [.want(tagIndex: 2, peer: ConnectPeer(address: Door.address(2), addressType: .randomDevice), tracked: false)])
        door.report(2, rssi: -60, at: 1.5)
        XCTAssertEqual(door.changes.count, 1, "the same wish is not repeated")
        door.proved(2, at: 2)
        XCTAssertEqual(door.changes.last, .unwant(tagIndex: 2))
        XCTAssertEqual(door.engine.state(of: "p2"), .present)
    }

    func testATrackedPersonWantsAConnectionWhileNotOutside() {
        var door = Door(persons: 4)
        _ = door.wishes.update(presence: door.engine, book: door.book, now: .zero)
        door.report(3, rssi: -90, at: 1)
        XCTAssertEqual(door.changes, [.want(tagIndex: 3, peer: ConnectPeer(address: Door.address(3), addressType: .randomDevice), tracked: true)])
        // Never heard again: away after `away_after_s`, and the wish goes with the person.
        door.report(1, rssi: -90, at: 1 + PresenceSettings().awayAfter.seconds + 1)
        XCTAssertEqual(door.engine.state(of: "p3"), .outside)
        XCTAssertEqual(door.changes.last, .unwant(tagIndex: 3))
    }

    func testARotatedAddressIsWantedAtItsNewPlace() {
        var door = Door(persons: 4)
        _ = door.wishes.update(presence: door.engine, book: door.book, now: .zero)
        door.report(0, rssi: -60, at: 1)
        let rotated = BluetoothAddress(rawValue: 0x40_AA_00_00_00_00)
        door.wishes.heard(tagIndex: 0, address: rotated, addressType: .randomDevice, at: seconds(1.1))
        XCTAssertEqual(door.wishes.update(presence: door.engine, book: door.book, now: seconds(1.1)),
                       [.want(tagIndex: 0, peer: ConnectPeer(address: rotated, addressType: .randomDevice), tracked: true)])
    }

    /// A tag heard again at the address it was decided with is re-decided at most once per
    /// `timeConditionsRecheck`; at a new address it is re-decided at once; and a condition
    /// that runs out with time alone (a lockout) still takes effect, at the first hearing
    /// after the interval.
    func testATagHeardAgainIsReDecidedAtMostOncePerRecheckInterval() {
        var door = Door(persons: 4)
        _ = door.wishes.update(presence: door.engine, book: door.book, now: .zero)
        door.report(2, rssi: -60, at: 1)
        let peer = ConnectPeer(address: Door.address(2), addressType: .randomDevice)
        XCTAssertEqual(door.changes, [.want(tagIndex: 2, peer: peer, tracked: false)])
        // Locked out: the wish goes (the agent tells the wishes when a person's proofs change).
        for _ in 0 ..< 3 { _ = door.book.recordFailure(tag: "t2", reason: .serviceMissing, now: seconds(1.2)) }
        door.wishes.personChanged("p2")
        door.changes += door.wishes.update(presence: door.engine, book: door.book, now: seconds(1.2))
        XCTAssertEqual(door.changes.last, .unwant(tagIndex: 2))
        let visited = door.wishes.tagsVisited
        for k in 1 ... 9 { door.report(2, rssi: -60, at: 1.2 + Double(k) * 0.1) }
        XCTAssertEqual(door.wishes.tagsVisited, visited, "heard within the interval at the same address")
        door.report(2, rssi: -60, at: 2.25)
        XCTAssertEqual(door.wishes.tagsVisited, visited + 1, "heard once the interval is over")
        let rotated = BluetoothAddress(rawValue: 0x40_BB_00_00_00_02)
        door.wishes.heard(tagIndex: 2, address: rotated, addressType: .randomDevice, at: seconds(2.3))
        _ = door.wishes.update(presence: door.engine, book: door.book, now: seconds(2.3))
        XCTAssertEqual(door.wishes.tagsVisited, visited + 2, "a new address is re-decided at once")
        // Heard every 30 s (so NEARBY all along) until the lockout has run out: the first
        // report after it wants the tag again, with no other input.
        let lockoutEnd = 1.2 + ProofBook.Policy().lockout.seconds
        var t = 2.4
        while t < lockoutEnd {
            door.report(2, rssi: -60, at: t)
            XCTAssertEqual(door.changes.last, .unwant(tagIndex: 2))
            t += 30
        }
        door.report(2, rssi: -60, at: lockoutEnd + 0.1)
        XCTAssertEqual(door.changes.last, .want(tagIndex: 2, peer: peer, tracked: false))
    }

    /// The work of a report does not grow with the roster: the same crowd at a door of
    /// 10, 1,000 and 10,000 persons visits exactly the same number of tags once the first
    /// update (which decides every tag once) is done, and decides exactly the same.
    func testTagsVisitedPerReportDoNotGrowWithTheRoster() {
        var visited: [Int] = []
        var decided: [[ConnectionWishes.Change]] = []
        for size in [10, 1_000, 10_000] {
            var door = Door(persons: size)
            _ = door.wishes.update(presence: door.engine, book: door.book, now: .zero)
            let initial = door.wishes.tagsVisited
            XCTAssertEqual(initial, door.wishes.tags.count, "the first update decides every tag once")
            // Ten persons arrive, linger, one proves, all walk away out of range.
            var t = 1.0
            for round in 0 ..< 40 {
                for n in 0 ..< 10 {
                    door.report(n, rssi: round < 30 ? -60 : -95, at: t)
                    t += 0.05
                }
                if round == 5 { door.proved(4, at: t) }
            }
            door.report(9, rssi: -95, at: t + PresenceSettings().awayAfter.seconds + 1)
            visited.append(door.wishes.tagsVisited - initial)
            decided.append(door.changes)
        }
        XCTAssertEqual(Set(visited).count, 1, "tags visited after the first update: \(visited)")
        XCTAssertLessThan(visited[0], 40 * 10 + 20, "one tag per report, plus a few persons' changes")
        XCTAssertEqual(decided[0], decided[1])
        XCTAssertEqual(decided[0], decided[2])
        XCTAssertFalse(decided[0].isEmpty)
    }
}

private extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
