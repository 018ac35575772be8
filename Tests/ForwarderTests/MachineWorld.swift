import EventLoop
import Store
import XCTest
@testable import Forwarder

/// ``ForwarderMachine`` alone, in a world kept in memory on a virtual clock: an outbox, a
/// server that keeps what it stored by idempotency key, the two timers. Every action is
/// performed as ``Forwarder`` performs it, with the store and the server as the test
/// scripts them; time moves only from one due thing to the next, so a day takes
/// milliseconds.
final class MachineWorld {
    var machine: ForwarderMachine
    private(set) var now: Instant = .zero
    let wallOriginMillis: Int64 = 1_789_012_345_678
    var wallMillis: Int64 { wallOriginMillis + now.nanoseconds / 1_000_000 }

    // The outbox.
    private(set) var rows: [OutboxEntry] = []
    /// Whether store reads and writes fail at a time (a full disk, a held lock).
    var storeFails: (Instant) -> Bool = { _ in false }
    /// Whether store writes fail while reads work (a lock another process holds).
    var storeWritesFail = false

    // The server.
    /// What becomes of one POST.
    enum Fate {
        /// The server keeps the event (201, or 200 for a key it has) and the answer arrives.
        case stored
        /// The server keeps the event but the answer is lost on the way back.
        case storedAnswerLost
        /// The server does not keep it and answers this way (or the request fails below HTTP).
        case refused(AttemptResult)
    }

    let latency: Duration = .milliseconds(40)
    /// The fate of `entry`'s POST with `headers` at a time.
    var server: (_ entry: OutboxEntry, _ headers: [String], _ at: Instant) -> Fate = { _, _, _ in .stored }
    /// The keys the server keeps, and how many times it answered each with success
    /// (a 201 or a 200 the gateway received).
    private(set) var serverKeys: Set<String> = []
    private(set) var successesAnswered: [String: Int] = [:]
    /// The order in which the server first kept events, per person.
    private(set) var storedOrder: [String: [Int64]] = [:]
    /// Every POST: which event, when.
    private(set) var attempts: [(sequence: Int64, at: Instant)] = []
    /// Whether each answer the machine got was a success or a retry, in order.
    private(set) var answerWasRetry: [Bool] = []
    private var inFlight: [(id: UInt64, key: String, due: Instant, result: AttemptResult)] = []
    private var nextTransfer: UInt64 = 1

    // The timers.
    private(set) var wake: Instant?
    private var poll: Instant?
    /// Wake-ups of the machine by its own timer (polls not counted).
    private(set) var wakeUps = 0

    private(set) var reports: [ForwarderEvent] = []
    private(set) var delivered = 0

    init(configuration: ForwarderConfiguration, pollInterval: Duration = .milliseconds(250)) {
        machine = ForwarderMachine(configuration: configuration, jitterSeed: 1)
        machine.pollInterval = pollInterval
    }

    static func configuration(maxBackoff: Duration = .seconds(60), token: String? = nil) -> ForwarderConfiguration {
        ForwarderConfiguration(url: "https://attendance.example.org", deviceId: "d", appVersion: "t",
                               token: token.map { Array($0.utf8) }, maxBackoff: maxBackoff)
    }

    // MARK: Inputs

    /// Commits an event of `person` and tells the machine.
    func commit(person: String) {
        let sequence = Int64(rows.count + 1)
        rows.append(OutboxEntry(sequence: sequence, idempotencyKey: "k\(sequence)", type: "checkin", personId: person,
                                body: Array("{\"sequence\": \(sequence)}".utf8), state: .pending, attempts: 0,
                                nextAttemptMillis: wallMillis, lastStatus: nil, lastError: nil,
                                createdAtMillis: wallMillis, updatedAtMillis: wallMillis))
        perform(machine.eventsCommitted())
    }

    func start() { perform(machine.start()) }
    func stop() { perform(machine.stop()) }

    func reload(_ configuration: ForwarderConfiguration) {
        perform(machine.reload(configuration, trustChanged: false, wallMillis: wallMillis))
    }

    /// Runs everything due up to `end` in time order, the clock at each thing's time, and
    /// leaves the clock at `end`. Fails on a busy loop: the machine asking to be woken
    /// where it already is, more than a few times in a row.
    func advance(to end: Instant) {
        var atSameInstant = 0
        while let next = [wake, poll, inFlight.map(\.due).min()].compactMap({ $0 }).min(), next <= end {
            atSameInstant = next == now ? atSameInstant + 1 : 0
            if atSameInstant > 100 { return XCTFail("busy loop at \(now)") }
            now = next
            if let due = wake, due <= now {
                wake = nil
                wakeUps += 1
                perform(machine.wakeFired())
            } else if let due = poll, due <= now {
                poll = nil
                perform(machine.pollDue())
            } else if let index = inFlight.firstIndex(where: { $0.due <= now }) {
                let done = inFlight.remove(at: index)
                switch DeliveryDecision.classify(done.result) {
                case .retry: answerWasRetry.append(true)
                case .sent:
                    answerWasRetry.append(false)
                    successesAnswered[done.key, default: 0] += 1
                default: break
                }
                perform(machine.answered([(done.id, done.result)], now: now, wallMillis: wallMillis))
            }
        }
        now = max(now, end)
    }

    func advance(by duration: Duration) { advance(to: now + duration) }

    // MARK: The outbox

    var pending: Int { rows.filter { $0.state == .pending }.count }
    func state(_ sequence: Int64) -> OutboxState { rows[Int(sequence) - 1].state }

    private func record(_ records: [DeliveryRecord]) {
        for record in records {
            switch record {
            case let .sent(sequence, status): settle(sequence, .sent, status: status)
            case let .rejected(sequence, status): settle(sequence, .rejected, status: status)
            case let .dead(sequence, status, _): settle(sequence, .dead, status: status)
            case let .retry(sequence, atMillis, _, _):
                rows[Int(sequence) - 1].attempts += 1
                rows[Int(sequence) - 1].nextAttemptMillis = atMillis
            }
        }
    }

    private func settle(_ sequence: Int64, _ state: OutboxState, status: Int) {
        rows[Int(sequence) - 1].state = state
        rows[Int(sequence) - 1].attempts += 1
        rows[Int(sequence) - 1].lastStatus = status
    }

    private func pendingHead(_ person: String) -> Int64? {
        while oldestPending < rows.count, rows[oldestPending].state != .pending { oldestPending += 1 }
        return rows[oldestPending...].first { $0.personId == person && $0.state == .pending }?.sequence
    }

    /// No row before this index is pending (rows only leave the pending state).
    private var oldestPending = 0

    private var storeError: StoreError { .sqlite(code: 13, message: "database or disk is full") }

    // MARK: Performing, as Forwarder does

    private func perform(_ actions: [ForwarderAction]) {
        for action in actions {
            switch action {
            case let .readPending(after):
                if storeFails(now) {
                    perform(machine.storeReadFailed(storeError, at: now))
                    continue
                }
                for row in rows[Int(after)...] where row.state == .pending {
                    machine.sawPending(sequence: row.sequence, personId: row.personId)
                }
                perform(machine.pendingRead())
            case let .readEntries(sequences):
                if storeFails(now) {
                    perform(machine.storeReadFailed(storeError, at: now))
                    continue
                }
                perform(machine.entriesRead(sequences.map { rows[Int($0) - 1] }))
            case let .send(request, entry):
                attempts.append((entry.sequence, now))
                let result: AttemptResult
                let fate = server(entry, request.headers, now)
                switch fate {
                case .stored, .storedAnswerLost:
                    let known = !serverKeys.insert(entry.idempotencyKey).inserted
                    if !known { storedOrder[entry.personId, default: []].append(entry.sequence) }
                    if case .storedAnswerLost = fate {
                        result = .failure(TransportFailure(kind: .network, message: "connection reset"))
                    } else {
                        result = .response(status: known ? 200 : 201, retryAfter: nil)
                    }
                case let .refused(refusal):
                    result = refusal
                }
                let id = nextTransfer
                nextTransfer += 1
                inFlight.append((id, entry.idempotencyKey, now + latency, result))
                machine.started(transfer: id, entry: entry)
            case let .record(records, finishing, _):
                if storeFails(now) || storeWritesFail {
                    perform(machine.recordFailed(finishing: finishing, storeError, at: now))
                    continue
                }
                record(records)
                perform(machine.storeWrote())
                for person in finishing { machine.personFinished(person, nextHead: pendingHead(person)) }
            case .retryPendingNow:
                if storeFails(now) || storeWritesFail {
                    perform(machine.storeFailed(storeError, at: now))
                    continue
                }
                perform(machine.storeWrote())
            case .checkForExternalChanges:
                // No other process writes this outbox.
                if storeFails(now) { perform(machine.storeFailed(storeError, at: now)) }
            case let .armWake(deadline):
                XCTAssertGreaterThanOrEqual(deadline, now, "a wake-up in the past")
                wake = deadline
            case let .schedulePoll(interval):
                poll = now + interval
            case .cancelAll:
                inFlight.removeAll()
                wake = nil
                poll = nil
            case .setMaxConnections:
                break
            case let .report(event):
                reports.append(event)
            case .reportDelivered:
                delivered += 1
            case .pump:
                perform(machine.pump(now: now, wallMillis: wallMillis))
            }
        }
    }
}
