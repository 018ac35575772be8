import EventLoop
import Store
import XCTest
@testable import Forwarder
@testable import Store

/// The forwarder against a hostile world: a URL that would send in clear text, a server
/// that asks for no wait at all, a wall clock stepped back, a store that cannot record.
final class ForwarderReliabilityTests: ForwarderTestCase {
    // MARK: Plain HTTP

    func testPlainHTTPToARemoteHostIsRefused() throws {
        let store = try makeStore(events: [])
        let loop = EventLoop()
        for url in ["http://10.0.0.5:8080", "http://attendance.example.org", "http://user:pw@192.168.1.2/", "http://127.1:80",
                    "http://[::2]:80", "http://localhost.example.org"] {
            XCTAssertThrowsError(try Forwarder(store: store, loop: loop, configuration: .init(url: url, deviceId: "d", appVersion: "t")), url) { error in
                guard case let .insecureURL(shown)? = error as? ForwarderError else { return XCTFail("\(error)") }
                XCTAssertFalse(shown.contains("pw"), "user-info is never shown: \(shown)")
            }
        }
        for url in ["http://127.0.0.1:8080", "http://127.255.0.9", "http://localhost:1", "http://[::1]:80", "http://[0:0:0:0:0:0:0:1]",
                    "https://10.0.0.5", "https://attendance.example.org"] {
            XCTAssertNoThrow(try Forwarder(store: store, loop: loop, configuration: .init(url: url, deviceId: "d", appVersion: "t")), url)
        }
        // And on reload: the running forwarder keeps its old settings.
        let forwarder = try Forwarder(store: store, loop: loop, configuration: .init(url: "http://127.0.0.1:9", deviceId: "d", appVersion: "t"))
        XCTAssertThrowsError(try forwarder.reload(.init(url: "http://10.0.0.5", deviceId: "d", appVersion: "t")))
        XCTAssertEqual(forwarder.configuration.url, "http://127.0.0.1:9")
    }

    func testTheTransferLayerRefusesPlainHTTPToARemoteHostToo() throws {
        let transfers = try HTTPTransfers(loop: EventLoop(), maxConnections: 1)
        let request = TransferRequest(url: "http://10.0.0.5:8080/v1/attendance/events", headers: [], body: [],
                                      timeout: .seconds(1), connectTimeout: .seconds(1), caBundle: nil)
        XCTAssertThrowsError(try transfers.start(request))
        XCTAssertEqual(transfers.count, 0)
    }

    // MARK: Retry-After

    func testRetryAfterLengthensButNeverShortensTheBackoff() throws {
        let store = try makeStore(events: [])
        let forwarder = try Forwarder(store: store, loop: EventLoop(),
                                      configuration: .init(url: "http://127.0.0.1:9", deviceId: "d", appVersion: "t", maxBackoff: .seconds(60)),
                                      jitterSeed: 7)
        let now: Int64 = 1_789_012_345_678
        let floor = Backoff(maximum: .seconds(60)).nominalDelay(failures: 4) * 0.8 // 5 s less the jitter
        for value in ["0", "Thu, 01 Jan 1970 00:00:00 GMT", "1"] {
            let delay = forwarder.retryDelay(failures: 4, retryAfter: value, long: false, nowMillis: now)
            XCTAssertGreaterThanOrEqual(delay, floor, "Retry-After: \(value)")
        }
        // Longer than the schedule: honoured, up to max_backoff_s.
        XCTAssertEqual(forwarder.retryDelay(failures: 1, retryAfter: "30", long: false, nowMillis: now), .seconds(30))
        XCTAssertEqual(forwarder.retryDelay(failures: 1, retryAfter: "3600", long: false, nowMillis: now), .seconds(60))
        // The credentials' long backoff is not cut short either.
        XCTAssertGreaterThanOrEqual(forwarder.retryDelay(failures: 1, retryAfter: "0", long: true, nowMillis: now), .seconds(48))
    }

    // MARK: Monotonic retries

    /// The system's clocks, with the wall clock stepped by `wallOffset`.
    final class SteppedClock: MonotonicClock {
        let system = SystemClock()
        var wallOffset: Int64 = 0
        var now: Instant { system.now }
        var wallMilliseconds: Int64 { system.wallMilliseconds + wallOffset }
    }

    func testAWallClockSteppedBackDoesNotDelayRetries() throws {
        let server = try LoopbackServer { index, _ in .init(status: index == 0 ? 503 : 201) }
        defer { server.stop() }
        let store = try makeStore(events: [("k", "a")])
        let clock = SteppedClock()
        let loop = EventLoop(clock: clock)
        let forwarder = try Forwarder(store: store, loop: loop,
                                      configuration: .init(url: server.url, deviceId: "d", appVersion: "t"), jitterSeed: 1) { event in
            // Right after the first failure is scheduled, NTP steps the clock back an hour.
            if case .retrying = event { clock.wallOffset = -3_600_000 }
        }
        forwarder.start()
        // Without the fix the retry waits for the wall clock: an hour.
        run(loop, limit: .seconds(5)) { (try? store.hasPending()) == false }
        XCTAssertEqual(server.requests.count, 2)
    }

    // MARK: A store that cannot record

    func testAStoreThatCannotRecordPausesDeliveryAndSaysSoOnce() throws {
        let server = try LoopbackServer { _, _ in .init(status: 201) }
        defer { server.stop() }
        let store = try makeStore(events: [("k", "a")], configuration: StoreConfiguration(busyTimeoutMillis: 20))
        // Another process holds the write lock: every outcome fails to be recorded.
        let other = try SQLiteConnection(path: store.path, busyTimeoutMillis: 0)
        try other.execute("BEGIN IMMEDIATE")
        let loop = EventLoop()
        var failures = 0
        var recoveries = 0
        let forwarder = try Forwarder(store: store, loop: loop,
                                      configuration: .init(url: server.url, deviceId: "d", appVersion: "t"), jitterSeed: 1) { event in
            switch event {
            case .storeFailed: failures += 1
            case .storeRecovered: recoveries += 1
            default: break
            }
        }
        forwarder.start()
        // Two and a half seconds of a locked store: without a pause the event goes out
        // again every few milliseconds.
        loop.schedule(after: .milliseconds(2_500)) { try? other.execute("COMMIT") }
        run(loop, limit: .seconds(15)) { (try? store.hasPending()) == false }
        XCTAssertLessThanOrEqual(server.requests.count, 4, "re-sent \(server.requests.count) times while the store was locked")
        XCTAssertEqual(failures, 1, "one line when the outage starts")
        XCTAssertEqual(recoveries, 1, "one line when it ends")
    }
}
