import EventLoop
import Store
import XCTest
@testable import Forwarder

/// The forwarder against a hostile world: a URL that would send in clear text, a server
/// that asks for no wait at all. (A wall clock stepped back and a store that cannot record:
/// ForwarderScheduleTests, on virtual time.)
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
}
