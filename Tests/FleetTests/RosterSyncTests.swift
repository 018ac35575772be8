import EventLoop
import XCTest
@testable import Fleet

/// The roster's decisions on a virtual clock (see docs/fleet.md). The "roster" is the
/// document's text; a document is valid unless it starts with "bad".
final class RosterSyncTests: XCTestCase {
    typealias Sync = RosterSync<String>

    private let validate: Sync.Validate = { body in
        let text = String(decoding: body, as: UTF8.self)
        if text.hasPrefix("bad") { return .failure(RosterRefusal("\(text): persons[0].id: wrong")) }
        let paused = text.hasSuffix("paused")
        return .success(.init(revision: text, mode: paused ? .paused : .active, persons: text.count, roster: text))
    }

    private func s(_ seconds: Int) -> Instant { Instant(nanoseconds: Int64(seconds) * 1_000_000_000) }
    private func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testPollsAtStartThenEveryIntervalAfterEachAnswerNeverTwoAtOnce() {
        var sync = Sync(pollInterval: .seconds(60))
        XCTAssertEqual(sync.start(at: s(0), persisted: nil, validate: validate), [.fetch(ifNoneMatch: nil)])
        XCTAssertNil(sync.nextFetch, "in flight: nothing else is due")
        XCTAssertEqual(sync.due(at: s(500)), [])
        XCTAssertEqual(sync.answered(.failed("HTTP 503"), at: s(3), validate: validate), [.report(.fetchFailing("HTTP 503"))])
        XCTAssertEqual(sync.nextFetch, s(63))
        XCTAssertEqual(sync.due(at: s(62)), [])
        XCTAssertEqual(sync.due(at: s(63)), [.fetch(ifNoneMatch: nil)])
        // Failing again is not news; working again is, once.
        XCTAssertEqual(sync.answered(.failed("timeout"), at: s(64), validate: validate), [])
        _ = sync.due(at: s(124))
        XCTAssertEqual(sync.answered(.notModified, at: s(125), validate: validate), [.report(.fetchWorksAgain)])
        _ = sync.due(at: s(185))
        XCTAssertEqual(sync.answered(.notModified, at: s(186), validate: validate), [])
        XCTAssertEqual(sync.counts.failed, 2)
        XCTAssertEqual(sync.counts.unchanged, 2)
        // A shorter interval (SIGHUP) brings the next request forward.
        sync.setPollInterval(.seconds(10), at: s(190))
        XCTAssertEqual(sync.nextFetch, s(200))
    }

    func testAValidRosterIsAppliedPersistedAndItsETagSentNextTime() {
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: validate)
        let actions = sync.answered(.roster(etag: "\"e1\"", body: body("r-1")), at: s(1), validate: validate)
        XCTAssertEqual(actions, [
            .apply("r-1"), .report(.inForce(revision: "r-1", persons: 3, fromDisk: false)),
            .persist(PersistedRoster(etag: "\"e1\"", error: nil, body: body("r-1"))),
        ])
        XCTAssertEqual(sync.status(filePersons: 7), RosterStatus(source: "server", revision: "r-1", persons: 3, error: nil))
        XCTAssertEqual(sync.due(at: s(61)), [.fetch(ifNoneMatch: "\"e1\"")])
        // The same document under a new ETag: nothing to apply, the ETag is kept.
        XCTAssertEqual(sync.answered(.roster(etag: "\"e2\"", body: body("r-1")), at: s(62), validate: validate),
                       [.persist(PersistedRoster(etag: "\"e2\"", error: nil, body: body("r-1")))])
        XCTAssertEqual(sync.counts.updated, 1)
    }

    func testAnInvalidRosterKeepsThePreviousOneAndItsErrorIsLoggedOnceAndReportedUntilAValidOne() {
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: validate)
        _ = sync.answered(.roster(etag: "e1", body: body("r-1")), at: s(1), validate: validate)
        _ = sync.due(at: s(61))
        let refused = sync.answered(.roster(etag: "e2", body: body("bad-2")), at: s(62), validate: validate)
        XCTAssertEqual(refused, [
            .report(.refused("bad-2: persons[0].id: wrong")),
            .persist(PersistedRoster(etag: "e2", error: "bad-2: persons[0].id: wrong", body: body("r-1"))),
        ], "nothing applied; the ETag of the invalid answer is kept, with the last valid roster")
        XCTAssertEqual(sync.status(filePersons: 7),
                       RosterStatus(source: "server", revision: "r-1", persons: 3, error: "bad-2: persons[0].id: wrong"))
        XCTAssertEqual(sync.due(at: s(122)), [.fetch(ifNoneMatch: "e2")])
        // A server without ETags sends the same invalid roster again: not logged again.
        XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("bad-2")), at: s(123), validate: validate),
                       [.persist(PersistedRoster(etag: nil, error: "bad-2: persons[0].id: wrong", body: body("r-1")))])
        XCTAssertEqual(sync.answered(.notModified, at: s(183), validate: validate), [])
        XCTAssertNotNil(sync.error, "still reported after a 304")
        // A valid one ends the error.
        let fixed = sync.answered(.roster(etag: "e3", body: body("r-3")), at: s(250), validate: validate)
        XCTAssertEqual(fixed.first, .apply("r-3"))
        XCTAssertNil(sync.status(filePersons: 7).error)
        XCTAssertEqual(sync.counts.refused, 2)
    }

    func testModeChangesAreActionsOnce() {
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: validate)
        let paused = sync.answered(.roster(etag: nil, body: body("r-1 paused")), at: s(1), validate: validate)
        XCTAssertTrue(paused.contains(.setMode(.paused)))
        let stillPaused = sync.answered(.roster(etag: nil, body: body("r-2 paused")), at: s(61), validate: validate)
        XCTAssertFalse(stillPaused.contains(.setMode(.paused)))
        let resumed = sync.answered(.roster(etag: nil, body: body("r-3")), at: s(121), validate: validate)
        XCTAssertTrue(resumed.contains(.setMode(.active)))
        // An invalid roster changes no mode.
        _ = sync.answered(.roster(etag: nil, body: body("bad paused")), at: s(181), validate: validate)
        XCTAssertEqual(sync.mode, .active)
    }

    func testAtStartThePersistedRosterIsInForceBeforeTheServerAnswers() {
        var sync = Sync(pollInterval: .seconds(60))
        let persisted = PersistedRoster(etag: "e9", error: nil, body: body("r-9 paused"))
        XCTAssertEqual(sync.start(at: s(0), persisted: persisted, validate: validate), [
            .apply("r-9 paused"), .report(.inForce(revision: "r-9 paused", persons: 10, fromDisk: true)),
            .setMode(.paused), .fetch(ifNoneMatch: "e9"),
        ])
        // The server cannot be reached: the roster stays.
        _ = sync.answered(.failed("connect"), at: s(2), validate: validate)
        XCTAssertEqual(sync.inForce?.roster, "r-9 paused")
    }

    func testAPersistedRosterThatNoLongerFitsIsReportedAndFetchedInFull() {
        var sync = Sync(pollInterval: .seconds(60))
        let persisted = PersistedRoster(etag: "e9", error: nil, body: body("bad-9"))
        XCTAssertEqual(sync.start(at: s(0), persisted: persisted, validate: validate), [
            .report(.refused("bad-9: persons[0].id: wrong")),
            .persist(PersistedRoster(etag: nil, error: "bad-9: persons[0].id: wrong", body: nil)),
            .fetch(ifNoneMatch: nil),
        ])
        XCTAssertEqual(sync.status(filePersons: 2), RosterStatus(source: "file", persons: 2, error: "bad-9: persons[0].id: wrong"))
    }

    func testAPersistedErrorIsStillReportedAfterARestart() {
        var sync = Sync(pollInterval: .seconds(60))
        let persisted = PersistedRoster(etag: "e2", error: "bad-2: x", body: body("r-1"))
        XCTAssertEqual(sync.start(at: s(0), persisted: persisted, validate: validate), [
            .apply("r-1"), .report(.inForce(revision: "r-1", persons: 3, fromDisk: true)),
            .report(.refused("bad-2: x")), .fetch(ifNoneMatch: "e2"),
        ])
        // The refused roster's ETag brings a 304: its error stays reported, not logged again.
        XCTAssertEqual(sync.answered(.notModified, at: s(1), validate: validate), [])
        XCTAssertEqual(sync.status(filePersons: 0), RosterStatus(source: "server", revision: "r-1", persons: 3, error: "bad-2: x"))
    }

    func testAReloadedFileThatConflictsWithdrawsTheServerPersons() {
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: validate)
        _ = sync.answered(.roster(etag: "e1", body: body("r-1")), at: s(1), validate: validate)
        let same = sync.fileReloaded(validate: validate)
        XCTAssertEqual(same.roster, "r-1")
        XCTAssertEqual(same.actions, [])
        let conflicting: Sync.Validate = { _ in .failure(RosterRefusal("r-1: persons[0].id: also in the file")) }
        let withdrawn = sync.fileReloaded(validate: conflicting)
        XCTAssertNil(withdrawn.roster)
        XCTAssertEqual(withdrawn.actions, [
            .report(.withdrawn("r-1: persons[0].id: also in the file")),
            .persist(PersistedRoster(etag: nil, error: "r-1: persons[0].id: also in the file", body: nil)),
        ])
        XCTAssertEqual(sync.status(filePersons: 4).source, "file")
        XCTAssertEqual(sync.due(at: s(61)), [.fetch(ifNoneMatch: nil)], "the whole roster is asked for again")
    }

    func testThePersistedFileFormatRoundTripsAndRefusesOtherFiles() {
        for roster in [PersistedRoster(etag: "\"abc\"", error: "r-2: persons[1].id: x\ny", body: body("{\"revision\": \"r\"}\n")),
                       PersistedRoster(etag: nil, error: nil, body: nil),
                       PersistedRoster(etag: "e", error: nil, body: [])] {
            let decoded = PersistedRoster(decoding: roster.encode())
            var expected = roster
            expected.error = roster.error.map { String($0.map { $0 == "\n" ? " " : $0 }) }
            XCTAssertEqual(decoded, expected)
        }
        XCTAssertNil(PersistedRoster(decoding: Array("{\"revision\": \"r-1\"}".utf8)))
        XCTAssertNil(PersistedRoster(decoding: Array("beacon-gateway roster 1\netag\nerror \nbody no\n\ntrailing".utf8)))
    }
}
