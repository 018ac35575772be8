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
        // The same document under a new ETag: nothing to apply or write; the new ETag is sent.
        XCTAssertEqual(sync.answered(.roster(etag: "\"e2\"", body: body("r-1")), at: s(62), validate: validate), [])
        XCTAssertEqual(sync.due(at: s(122)), [.fetch(ifNoneMatch: "\"e2\"")])
        XCTAssertEqual(sync.counts.updated, 1)
        XCTAssertEqual(sync.counts.unchanged, 1)
    }

    func testAnInvalidRosterKeepsThePreviousOneAndItsErrorIsLoggedOnceAndReportedUntilAValidOne() {
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: validate)
        _ = sync.answered(.roster(etag: "e1", body: body("r-1")), at: s(1), validate: validate)
        _ = sync.due(at: s(61))
        let refused = sync.answered(.roster(etag: "e2", body: body("bad-2")), at: s(62), validate: validate)
        XCTAssertEqual(refused, [.report(.refused("bad-2: persons[0].id: wrong"))],
                       "nothing applied, nothing written: what is in force did not change")
        XCTAssertEqual(sync.status(filePersons: 7),
                       RosterStatus(source: "server", revision: "r-1", persons: 3, error: "bad-2: persons[0].id: wrong"))
        XCTAssertEqual(sync.persistedState.etag, "e1", "what is kept is the roster in force under its own ETag")
        XCTAssertEqual(sync.persistedState.body, body("r-1"))
        XCTAssertEqual(sync.due(at: s(122)), [.fetch(ifNoneMatch: "e2")], "a 304 to it is the refused roster still current")
        XCTAssertEqual(sync.answered(.notModified, at: s(123), validate: validate), [])
        XCTAssertNotNil(sync.error, "still reported after a 304")
        // A valid one ends the error.
        let fixed = sync.answered(.roster(etag: "e3", body: body("r-3")), at: s(250), validate: validate)
        XCTAssertEqual(fixed.first, .apply("r-3"))
        XCTAssertNil(sync.status(filePersons: 7).error)
        XCTAssertEqual(sync.counts.refused, 1)
    }

    /// A server that ignores `If-None-Match` (or sends no ETag) answers every poll with the
    /// document refused last: it is known by its SHA-256, not validated or written again.
    func testARefusedDocumentIsRememberedByItsDigestAndNeitherReadNorWrittenAgain() {
        var validations = 0
        let counting: Sync.Validate = { body in
            validations += 1
            return self.validate(body)
        }
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: counting)
        _ = sync.answered(.roster(etag: nil, body: body("r-1")), at: s(1), validate: counting)
        XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("bad-2")), at: s(61), validate: counting),
                       [.report(.refused("bad-2: persons[0].id: wrong"))])
        XCTAssertEqual(validations, 2)
        for poll in 2 ... 10 {
            _ = sync.due(at: s(61 * poll))
            XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("bad-2")), at: s(61 * poll), validate: counting), [],
                           "poll \(poll): no log line, no write")
        }
        XCTAssertEqual(validations, 2, "read once")
        XCTAssertEqual(sync.counts.refused, 1)
        XCTAssertEqual(sync.counts.refusedAgain, 9)
        XCTAssertEqual(sync.error, "bad-2: persons[0].id: wrong", "still reported")
        // Another refused document is read (and logged); the first one after it again too:
        // only the last refusal is remembered.
        XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("bad-3")), at: s(700), validate: counting),
                       [.report(.refused("bad-3: persons[0].id: wrong"))])
        XCTAssertEqual(validations, 3)
        // The server goes back to the roster in force: the refusal is over, nothing is read.
        XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("r-1")), at: s(760), validate: counting),
                       [.report(.inForce(revision: "r-1", persons: 3, fromDisk: false))])
        XCTAssertEqual(validations, 3)
        XCTAssertNil(sync.error)
        XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("r-1")), at: s(820), validate: counting), [])
    }

    /// `roster.json` changes only with what is in force: a new valid roster, a withdrawal.
    func testTheRosterFileIsWrittenOnlyWhenWhatIsInForceChanges() {
        var sync = Sync(pollInterval: .seconds(60))
        var writes: [PersistedRoster] = []
        func note(_ actions: [Sync.Action]) {
            for case let .persist(state) in actions { writes.append(state) }
        }
        note(sync.start(at: s(0), persisted: nil, validate: validate))
        let answers: [RosterAnswer] = [
            .roster(etag: "e1", body: body("r-1")), .notModified, .roster(etag: "e1b", body: body("r-1")),
            .roster(etag: "e2", body: body("bad-2")), .roster(etag: "e2", body: body("bad-2")), .notModified,
            .failed("timeout"), .roster(etag: nil, body: body("bad-3")), .roster(etag: "e4", body: body("r-4")),
            .roster(etag: "e4", body: body("r-4")),
        ]
        for (index, answer) in answers.enumerated() {
            _ = sync.due(at: s(60 * index))
            note(sync.answered(answer, at: s(60 * index), validate: validate))
        }
        XCTAssertEqual(writes, [PersistedRoster(etag: "e1", body: body("r-1")), PersistedRoster(etag: "e4", body: body("r-4"))])
        let conflicting: Sync.Validate = { _ in .failure(RosterRefusal("r-4: persons[0].id: also in the file")) }
        note(sync.fileReloaded(validate: conflicting).actions)
        XCTAssertEqual(writes.last, PersistedRoster(etag: nil, error: "r-4: persons[0].id: also in the file", body: nil))
        XCTAssertEqual(writes.count, 3)
    }

    /// A refusal may come of the configuration file (an id the file also uses): after a
    /// reload the refused roster is asked for in full and read again, not kept refused by
    /// its ETag's 304s.
    func testARefusedRosterIsAskedForInFullAndReadAgainAfterAReload() {
        var fileHasU7 = true
        let beside: Sync.Validate = { body in
            let text = String(decoding: body, as: UTF8.self)
            if fileHasU7, text.contains("u_7") { return .failure(RosterRefusal("\(text): persons[0].id: also in the file")) }
            return .success(.init(revision: text, mode: .active, persons: 1, roster: text))
        }
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: beside)
        _ = sync.answered(.roster(etag: "e1", body: body("r-1")), at: s(1), validate: beside)
        _ = sync.due(at: s(61))
        XCTAssertEqual(sync.answered(.roster(etag: "e2", body: body("r-2 u_7")), at: s(61), validate: beside),
                       [.report(.refused("r-2 u_7: persons[0].id: also in the file"))])
        XCTAssertEqual(sync.due(at: s(121)), [.fetch(ifNoneMatch: "e2")])
        _ = sync.answered(.notModified, at: s(121), validate: beside)
        // The file no longer holds u_7 (SIGHUP): the roster in force stays, the refused one
        // is asked for again without If-None-Match.
        fileHasU7 = false
        let reloaded = sync.fileReloaded(validate: beside)
        XCTAssertEqual(reloaded.roster, "r-1")
        XCTAssertEqual(reloaded.actions, [])
        XCTAssertEqual(sync.due(at: s(181)), [.fetch(ifNoneMatch: nil)])
        let taken = sync.answered(.roster(etag: "e2", body: body("r-2 u_7")), at: s(181), validate: beside)
        XCTAssertEqual(taken.first, .apply("r-2 u_7"))
        XCTAssertNil(sync.error)
        XCTAssertEqual(sync.due(at: s(241)), [.fetch(ifNoneMatch: "e2")])
    }

    /// The same with the document's bytes remembered (a server without ETags): the reload
    /// forgets them, so the next answer is read.
    func testAReloadForgetsTheRefusedDigest() {
        var validations = 0
        var valid = false
        let beside: Sync.Validate = { body in
            validations += 1
            let text = String(decoding: body, as: UTF8.self)
            return valid ? .success(.init(revision: text, mode: .active, persons: 1, roster: text)) : .failure(RosterRefusal("no"))
        }
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: beside)
        _ = sync.answered(.roster(etag: nil, body: body("r-1")), at: s(1), validate: beside)
        _ = sync.answered(.roster(etag: nil, body: body("r-1")), at: s(61), validate: beside)
        XCTAssertEqual(validations, 1, "the second answer was known")
        valid = true
        XCTAssertEqual(sync.fileReloaded(validate: beside).actions, [], "nothing in force to check")
        XCTAssertEqual(sync.answered(.roster(etag: nil, body: body("r-1")), at: s(121), validate: beside).first, .apply("r-1"))
        XCTAssertEqual(validations, 2)
    }

    func testAnETagOverTheLimitIsNotKeptSaidOnceAndItsRosterStillUsed() {
        var sync = Sync(pollInterval: .seconds(60))
        _ = sync.start(at: s(0), persisted: nil, validate: validate)
        let long = "\"" + String(repeating: "a", count: 255) + "\""
        XCTAssertEqual(long.utf8.count, 257)
        let first = sync.answered(.roster(etag: long, body: body("r-1")), at: s(1), validate: validate)
        XCTAssertEqual(first, [
            .report(.etagNotKept("an ETag of 257 bytes (at most 256 are kept)")),
            .apply("r-1"), .report(.inForce(revision: "r-1", persons: 3, fromDisk: false)),
            .persist(PersistedRoster(etag: nil, error: nil, body: body("r-1"))),
        ])
        XCTAssertEqual(sync.due(at: s(61)), [.fetch(ifNoneMatch: nil)], "the whole roster is asked for")
        XCTAssertEqual(sync.answered(.roster(etag: long, body: body("r-1")), at: s(61), validate: validate), [],
                       "said once while the server keeps sending such ETags")
        // One of 256 bytes is kept; a long one after it is said again.
        let longest = String(long.dropFirst(2)) + "\""
        XCTAssertEqual(longest.utf8.count, 256)
        XCTAssertEqual(sync.answered(.roster(etag: longest, body: body("r-1")), at: s(121), validate: validate), [])
        XCTAssertEqual(sync.due(at: s(181)), [.fetch(ifNoneMatch: longest)])
        XCTAssertEqual(sync.answered(.roster(etag: "\"a\u{7}\"", body: body("r-2")), at: s(181), validate: validate).first,
                       .report(.etagNotKept("an ETag with bytes a header may not carry")))
        XCTAssertEqual(sync.inForce?.roster, "r-2")
        XCTAssertEqual(sync.due(at: s(241)), [.fetch(ifNoneMatch: nil)])
    }

    /// A request that cannot even start (the agent could not make its fetcher) is a failed
    /// request: said once, counted, and the next one is due a poll later.
    func testARequestThatCannotStartIsAFailureTriedAgainAtTheNextPoll() {
        var sync = Sync(pollInterval: .seconds(60))
        XCTAssertEqual(sync.start(at: s(0), persisted: nil, validate: validate), [.fetch(ifNoneMatch: nil)])
        let reason = "cannot start roster requests: server.ca_file /etc/ca.pem: holds no PEM certificate"
        XCTAssertEqual(sync.answered(.failed(reason), at: s(0), validate: validate), [.report(.fetchFailing(reason))])
        XCTAssertEqual(sync.nextFetch, s(60))
        XCTAssertEqual(sync.due(at: s(60)), [.fetch(ifNoneMatch: nil)])
        XCTAssertEqual(sync.answered(.failed(reason), at: s(60), validate: validate), [])
        XCTAssertEqual(sync.counts.failed, 2)
        XCTAssertEqual(sync.due(at: s(120)), [.fetch(ifNoneMatch: nil)])
        XCTAssertEqual(sync.answered(.roster(etag: "e1", body: body("r-1")), at: s(121), validate: validate).prefix(2),
                       [.report(.fetchWorksAgain), .apply("r-1")])
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

    /// A refusal kept on disk (written beside the roster by earlier versions) is reported,
    /// and the roster asked for in full: the configuration may have changed since.
    func testAPersistedErrorIsReportedAfterARestartAndItsRosterReadAgain() {
        var sync = Sync(pollInterval: .seconds(60))
        let persisted = PersistedRoster(etag: "e2", error: "bad-2: x", body: body("r-1"))
        XCTAssertEqual(sync.start(at: s(0), persisted: persisted, validate: validate), [
            .apply("r-1"), .report(.inForce(revision: "r-1", persons: 3, fromDisk: true)),
            .report(.refused("bad-2: x")), .fetch(ifNoneMatch: nil),
        ])
        XCTAssertEqual(sync.status(filePersons: 0), RosterStatus(source: "server", revision: "r-1", persons: 3, error: "bad-2: x"))
        XCTAssertEqual(sync.answered(.roster(etag: "e2", body: body("bad-2")), at: s(1), validate: validate),
                       [.report(.refused("bad-2: persons[0].id: wrong"))])
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
