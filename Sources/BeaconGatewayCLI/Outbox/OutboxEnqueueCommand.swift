import ArgumentParser
import EventLoop
import Journal
import Store
#if canImport(Glibc)
import Glibc
#endif

/// `outbox enqueue`: commits synthetic events through the Store API, one transaction per
/// event exactly as the agent does, and prints `SEQUENCE KEY` for each once committed.
/// A testing and benchmarking aid.
struct OutboxEnqueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Testing aid: commit synthetic events (prints \"SEQUENCE KEY\" per committed event).",
        discussion: """
        Each line is written only after its commit returned (synchronous=FULL), so whatever \
        was printed is on disk. --latency prints p50/p99 commit latency on stderr at the end.
        """
    )

    @OptionGroup var location: OutboxLocation

    @Option(name: .long, help: "Events to commit (0: until killed).")
    var count: Int = 1

    @Option(name: .long, help: "Spread events over this many persons (u_0 … u_N-1).")
    var persons: Int = 1

    @Option(name: .long, help: "The person, when --persons is 1.")
    var person: String = "u_0"

    @Option(name: .long, help: "Gateway id put into the events.")
    var gateway: String = "door-test"

    @Option(name: .long, help: "Cap on undelivered events (StoreConfiguration.maximumEvents).")
    var maximumEvents: Int = 1_000_000

    @Option(name: .long, help: "Events per transaction (1, the default, is how the agent commits).")
    var batch: Int = 1

    @Flag(name: .long, help: "Do not print a line per event.")
    var quiet = false

    @Flag(name: .long, help: "Measure each commit and print p50/p99 on stderr.")
    var latency = false

    func validate() throws {
        guard count >= 0 else { throw ValidationError("--count must be 0 or more") }
        guard persons >= 1 else { throw ValidationError("--persons must be at least 1") }
        guard (1 ... 100_000).contains(batch) else { throw ValidationError("--batch must be 1…100000") }
    }

    func run() throws {
        let path = try location.storePath()
        let store: Store
        do {
            store = try Store(path: path, configuration: StoreConfiguration(maximumEvents: maximumEvents))
        } catch {
            printError("outbox: \(error.description)")
            throw GatewayExitCode.runtimeFailure
        }
        let clock = SystemClock()
        let nonce = UInt64.random(in: .min ... .max)
        var latencies: [Int64] = []
        var index = 0
        var committed = 0
        var failure: StoreError?
        while count == 0 || index < count {
            let size = count == 0 ? batch : min(batch, count - index)
            let now = clock.wallMilliseconds
            var committedNow: [(Int64, String)] = []
            let started = clock.now
            do {
                try store.commit { (transaction: inout StoreTransaction) throws(StoreError) in
                    committedNow = []
                    for offset in 0 ..< size {
                        let number = index + offset
                        let personId = persons == 1 ? person : "u_\(number % persons)"
                        let event = SyntheticEvent(personId: personId, gatewayId: gateway, type: number % 2 == 0 ? "checkin" : "checkout",
                                                   visitStartMillis: now, nonce: nonce &+ UInt64(number))
                        let key = event.idempotencyKey
                        let sequence = try transaction.appendEvent(idempotencyKey: key, type: event.type, personId: personId, createdAtMillis: now) { seq in
                            event.body(sequence: seq, key: key, nowMillis: now)
                        }
                        if let sequence { committedNow.append((sequence, key)) }
                    }
                }
            } catch {
                failure = error
                break
            }
            if latency { latencies.append((clock.now - started).nanosecondsClamped) }
            committed += committedNow.count
            if !quiet, !committedNow.isEmpty {
                // Printed only after the commit returned: a printed line is on disk.
                writeStandardOutput(committedNow.map { "\($0.0) \($0.1)\n" }.joined())
            }
            index += size
        }
        if latency, !latencies.isEmpty {
            latencies.sort()
            func percentile(_ p: Double) -> Double {
                Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1e6
            }
            printError("enqueue latency_ms p50=\(percentile(0.50)) p99=\(percentile(0.99)) max=\(percentile(1.0)) events=\(latencies.count)")
        }
        if let failure {
            printError("outbox enqueue: \(failure.description) (after \(committed) events)")
            throw GatewayExitCode.runtimeFailure
        }
    }
}
