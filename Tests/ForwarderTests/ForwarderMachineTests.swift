import EventLoop
import SplitMix
import Store
import XCTest
@testable import Forwarder

/// ``ForwarderMachine`` alone on a virtual clock (``MachineWorld``): a day against a
/// server that keeps failing and recovering, a refused token, a store that cannot record.
/// (The same decisions through the loop-bound Forwarder and SQLite: ForwarderScheduleTests.)
final class ForwarderMachineTests: XCTestCase {
    // MARK: A day

    func testADayOfAnIntermittentlyFailingServerDeliversEveryEventOnceInOrderWithBoundedWaits() throws {
        let maxBackoff: Duration = .seconds(60)
        // No other process writes this outbox: polling it every 10 s rather than every
        // 250 ms only saves the test's time.
        let world = MachineWorld(configuration: MachineWorld.configuration(maxBackoff: maxBackoff), pollInterval: .seconds(10))
        var random = SplitMix64(seed: 24)
        // The server's day in ten-minute blocks: about a quarter of them an outage of one
        // kind; the last hour is calm, so the day ends with everything delivered.
        let block: Duration = .seconds(600)
        let outages: [AttemptResult?] = (0 ..< 144).map { index in
            guard index < 138, random.unit() < 0.25 else { return nil }
            return [
                .response(status: 503, retryAfter: nil),
                .response(status: 503, retryAfter: "30"),
                .response(status: 429, retryAfter: "0"),
                .response(status: 302, retryAfter: nil),
                .failure(TransportFailure(kind: .timeout, message: "timed out")),
                .failure(TransportFailure(kind: .connect, message: "connection refused")),
            ][Int(random.unit() * 6)]
        }
        var flaky = SplitMix64(seed: 7)
        world.server = { _, _, at in
            if let outage = outages[Int((at - .zero) / block)] { return .refused(outage) }
            // On good blocks, now and then an answer lost after the server kept the event,
            // or a lone error.
            let draw = flaky.unit()
            if draw < 0.03 { return .storedAnswerLost }
            if draw < 0.05 { return .refused(.response(status: 500, retryAfter: nil)) }
            return .stored
        }
        world.start()
        // Eight persons (one per slot: no wait is a wait for a free slot), an event about
        // every minute.
        var committer = SplitMix64(seed: 3)
        let day: Duration = .seconds(86_400)
        while world.now < .zero + day - .seconds(300) {
            world.advance(by: .milliseconds(Int64(30_000 + committer.unit() * 60_000)))
            world.commit(person: "p\(Int(committer.unit() * 8))")
        }
        world.advance(to: .zero + day)

        let keys = world.rows.map(\.idempotencyKey)
        XCTAssertGreaterThan(keys.count, 900)
        XCTAssertEqual(world.pending, 0, "everything delivered by the end of the day")
        XCTAssertEqual(world.serverKeys, Set(keys), "no event lost")
        XCTAssertEqual(world.successesAnswered, Dictionary(uniqueKeysWithValues: keys.map { ($0, 1) }),
                       "every event answered with success once: never sent again after")
        XCTAssertTrue(world.rows.allSatisfy { $0.state == .sent })
        for (person, sequences) in world.storedOrder {
            XCTAssertEqual(sequences, sequences.sorted(), "\(person) in sequence order")
        }
        XCTAssertEqual(world.delivered, keys.count, "one latency sample per delivery")

        // Every wait between two attempts of one event: at least the schedule's first step
        // (less its jitter), at most max_backoff_s.
        var lastAttempt: [Int64: Instant] = [:]
        var waits: [Duration] = []
        for (sequence, at) in world.attempts {
            if let last = lastAttempt[sequence] { waits.append(at - last - world.latency) }
            lastAttempt[sequence] = at
        }
        XCTAssertGreaterThan(waits.count, 200, "the day had failures to wait out")
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(waits.min()), .milliseconds(80), "no tight loop")
        XCTAssertLessThanOrEqual(try XCTUnwrap(waits.max()), maxBackoff, "never longer than max_backoff_s")
        XCTAssertTrue(waits.contains { $0 > maxBackoff * 0.7 }, "the backoff reached its cap")

        // No busy loop: the machine woke itself at most once per attempt it then made.
        XCTAssertLessThanOrEqual(world.wakeUps, world.attempts.count)
        // One line when delivery starts failing and one when it recovers, per episode,
        // not one per attempt.
        let episodes = zip([false] + world.answerWasRetry, world.answerWasRetry).filter { !$0 && $1 }.count
        let failing = world.reports.filter { if case .failing = $0 { true } else { false } }.count
        let recovered = world.reports.filter { $0 == .recovered }.count
        XCTAssertEqual(failing, episodes)
        XCTAssertEqual(recovered, episodes, "the day ends recovered")
        XCTAssertLessThan(failing * 3, waits.count)
    }

    // MARK: The token

    func testARefusedTokenIsTriedAgainAboutMaxBackoffLaterAndAtOnceWhenTheTokenChanges() throws {
        let maxBackoff: Duration = .seconds(60)
        let world = MachineWorld(configuration: MachineWorld.configuration(maxBackoff: maxBackoff, token: "old"))
        world.server = { _, headers, _ in
            headers.contains("Authorization: Bearer new") ? .stored : .refused(.response(status: 401, retryAfter: nil))
        }
        world.start()
        world.commit(person: "a")
        world.advance(by: .seconds(1))
        XCTAssertEqual(world.attempts.count, 1)
        XCTAssertTrue(world.machine.authRefused)
        XCTAssertTrue(world.reports.contains(.failing(errorClass: .auth, message: "HTTP 401: the server refuses the gateway's token")))
        // The long wait: about max_backoff_s, jitter only downwards (docs/event-api.md).
        let wake = try XCTUnwrap(world.wake)
        XCTAssertGreaterThanOrEqual(wake - world.latency, .zero + maxBackoff * 0.8)
        XCTAssertLessThanOrEqual(wake - world.latency, .zero + maxBackoff)
        world.advance(to: wake - .milliseconds(1))
        XCTAssertEqual(world.attempts.count, 1, "not before")
        world.advance(to: wake)
        XCTAssertEqual(world.attempts.count, 2)
        world.advance(by: .seconds(1))
        XCTAssertTrue(world.machine.authRefused, "still refused")

        // A reload with the same token changes nothing.
        world.reload(MachineWorld.configuration(maxBackoff: maxBackoff, token: "old"))
        XCTAssertEqual(world.attempts.count, 2)
        XCTAssertTrue(world.machine.authRefused)
        // A new token: the wait ends at once.
        let reloadedAt = world.now
        world.reload(MachineWorld.configuration(maxBackoff: maxBackoff, token: "new"))
        XCTAssertFalse(world.machine.authRefused)
        XCTAssertEqual(world.attempts.last?.at, reloadedAt)
        world.advance(by: world.latency)
        XCTAssertEqual(world.state(1), .sent)
        XCTAssertEqual(world.reports.last, .recovered)
    }

    // MARK: The store

    func testAStoreThatCannotRecordPausesFromOneToThirtySecondsSaysSoOnceAndResumes() throws {
        let world = MachineWorld(configuration: MachineWorld.configuration())
        world.start()
        world.commit(person: "a")
        // The event is on its way when the disk fills: its answer cannot be recorded.
        let outageEnds: Instant = .zero + .seconds(120)
        world.storeFails = { at in at < outageEnds }
        world.advance(to: outageEnds - .milliseconds(1))
        // Reads fail too, and so does each poll of the store: nothing is sent again while
        // store work pauses, 1 s doubling to 30 s, and the machine wakes only at a pause's end.
        XCTAssertEqual(world.attempts.count, 1)
        let storeFailed = world.reports.filter { if case .storeFailed = $0 { true } else { false } }
        XCTAssertEqual(storeFailed.count, 1, "one line when the outage starts")
        let wake = try XCTUnwrap(world.wake)
        XCTAssertLessThanOrEqual(wake, world.now + .seconds(30), "never paused longer than 30 s")
        XCTAssertLessThanOrEqual(world.wakeUps, 10, "no busy loop: \(world.wakeUps) wake-ups")
        XCTAssertFalse(world.reports.contains(.storeRecovered))

        world.advance(by: .seconds(31))
        XCTAssertEqual(world.state(1), .sent, "sent again once the pause is over (same key), then recorded")
        XCTAssertEqual(world.attempts.count, 2)
        XCTAssertEqual(world.serverKeys, ["k1"])
        XCTAssertEqual(world.reports.filter { $0 == .storeRecovered }.count, 1, "one line when it ends")
        // And delivery goes on as before.
        world.commit(person: "a")
        world.advance(by: .seconds(1))
        XCTAssertEqual(world.state(2), .sent)
    }

    func testWhileTheStoreTakesNoWritesTheSameEventIsResentOnlyAtEachPausesEnd() throws {
        let world = MachineWorld(configuration: MachineWorld.configuration())
        world.start()
        world.commit(person: "a")
        // A lock held by another process: reads work, writes do not.
        world.storeWritesFail = true
        world.advance(by: .seconds(120))
        let gaps = zip(world.attempts, world.attempts.dropFirst()).map { $1.at - $0.at - world.latency }
        let pauses: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)]
        XCTAssertEqual(Array(gaps.prefix(pauses.count)), pauses)
        world.storeWritesFail = false
        world.advance(by: .seconds(31))
        XCTAssertEqual(world.pending, 0)
        XCTAssertEqual(world.serverKeys, ["k1"], "one event, kept once by the server however often it was sent")
        XCTAssertEqual(world.reports.filter { if case .storeFailed = $0 { true } else { false } }.count, 1)
        XCTAssertEqual(world.reports.filter { $0 == .storeRecovered }.count, 1)
    }

    // MARK: Stop

    func testStopAbandonsRequestsInFlightAndAStartSendsTheirEventsAgainUnderTheSameKey() throws {
        let world = MachineWorld(configuration: MachineWorld.configuration())
        world.start()
        world.commit(person: "a")
        world.commit(person: "b")
        XCTAssertEqual(world.machine.inFlightCount, 2)
        world.stop()
        XCTAssertEqual(world.machine.inFlightCount, 0)
        XCTAssertNil(world.wake)
        world.advance(by: .seconds(10))
        XCTAssertEqual(world.pending, 2, "nothing recorded after the stop")
        world.commit(person: "c")
        XCTAssertEqual(world.attempts.count, 2, "a stopped machine sends nothing")
        world.start()
        world.advance(by: .seconds(1))
        XCTAssertEqual(world.pending, 0)
        XCTAssertEqual(world.attempts.map(\.sequence), [1, 2, 1, 2, 3])
        XCTAssertEqual(world.serverKeys, ["k1", "k2", "k3"])
    }

    // MARK: Actions

    func testAnAnswerIsRecordedThenToldThenMoreWorkIsLookedFor() throws {
        var machine = ForwarderMachine(configuration: MachineWorld.configuration(), jitterSeed: 1)
        _ = machine.start()
        let entry = OutboxEntry(sequence: 5, idempotencyKey: "k5", type: "checkin", personId: "a", body: [], state: .pending,
                                attempts: 0, nextAttemptMillis: 0, lastStatus: nil, lastError: nil, createdAtMillis: 900, updatedAtMillis: 900)
        machine.started(transfer: 1, entry: entry)
        machine.started(transfer: 2, entry: OutboxEntry(sequence: 6, idempotencyKey: "k6", type: "checkin", personId: "b", body: [],
                                                        state: .pending, attempts: 0, nextAttemptMillis: 0, lastStatus: nil,
                                                        lastError: nil, createdAtMillis: 900, updatedAtMillis: 900))
        let actions = machine.answered([(1, .response(status: 201, retryAfter: nil)), (2, .response(status: 400, retryAfter: nil)),
                                        (3, .response(status: 201, retryAfter: nil))],
                                       now: .zero + .seconds(1), wallMillis: 1_000)
        XCTAssertEqual(actions.map(\.label), [
            "reportDelivered(900, 1000)",
            "record([sent(5, 201), dead(6, 400, HTTP 400)], finishing: [a, b], at 1000)",
            "report(delivered 5)", "report(deadLetter 6)",
            "pump",
        ], "an unknown transfer (3) is ignored")
        XCTAssertEqual(machine.inFlightCount, 0)
    }
}

extension ForwarderAction {
    /// A short text of the action, to compare lists of them.
    var label: String {
        switch self {
        case let .reportDelivered(created, delivered): "reportDelivered(\(created), \(delivered))"
        case let .record(records, finishing, atMillis):
            "record([\(records.map(\.label).joined(separator: ", "))], finishing: [\(finishing.joined(separator: ", "))], at \(atMillis))"
        case let .report(.delivered(sequence, _, _)): "report(delivered \(sequence))"
        case let .report(.deadLetter(sequence, _, _)): "report(deadLetter \(sequence))"
        case let .report(event): "report(\(event))"
        case .pump: "pump"
        default: "\(self)"
        }
    }
}

extension DeliveryRecord {
    var label: String {
        switch self {
        case let .sent(sequence, status): "sent(\(sequence), \(status))"
        case let .rejected(sequence, status): "rejected(\(sequence), \(status))"
        case let .dead(sequence, status, error): "dead(\(sequence), \(status), \(error))"
        case let .retry(sequence, atMillis, errorClass, _): "retry(\(sequence), \(atMillis), \(errorClass))"
        }
    }
}
