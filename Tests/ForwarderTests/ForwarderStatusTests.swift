import Store
import XCTest
@testable import Forwarder

final class ForwarderStatusTests: XCTestCase {
    private func outbox(pending: Int = 0, dead: Int = 0, success: Int64? = nil, error: Int64? = nil,
                        errorClass: DeliveryErrorClass? = nil, maximum: Int = .max) -> OutboxStatus {
        OutboxStatus(pending: pending, sent: 0, rejected: 0, dead: dead, oldestPendingAgeMillis: nil,
                     lastSuccessMillis: success, lastErrorMillis: error, lastErrorClass: errorClass,
                     lastError: nil, lastSequence: 0, maximumEvents: maximum)
    }

    func testAmberFollowsSpecSection9() {
        XCTAssertEqual(ForwarderStatus(outbox: outbox(), inFlight: 0, authRefused: false).amber, .off)
        // Draining with the server answering: nothing to report.
        XCTAssertEqual(ForwarderStatus(outbox: outbox(pending: 5, success: 10, error: 5, errorClass: .server), inFlight: 2, authRefused: false).amber, .off)
        // Waiting while the server fails: blink.
        XCTAssertEqual(ForwarderStatus(outbox: outbox(pending: 5, success: 5, error: 10, errorClass: .network), inFlight: 0, authRefused: false).amber, .blink)
        // Refused credentials, dead letters or a full outbox: steady.
        XCTAssertEqual(ForwarderStatus(outbox: outbox(pending: 5, error: 10, errorClass: .auth), inFlight: 0, authRefused: true).amber, .steady)
        XCTAssertEqual(ForwarderStatus(outbox: outbox(dead: 1), inFlight: 0, authRefused: false).amber, .steady)
        XCTAssertEqual(ForwarderStatus(outbox: outbox(pending: 3, maximum: 3), inFlight: 0, authRefused: false).amber, .steady)
    }

    func testSummaryForStatusLine() {
        XCTAssertEqual(ForwarderStatus(outbox: outbox(), inFlight: 0, authRefused: false).summary, "outbox 0")
        XCTAssertEqual(ForwarderStatus(outbox: outbox(pending: 42, error: 10, errorClass: .server), inFlight: 0, authRefused: false).summary,
                       "outbox 42 (retrying: server)")
        XCTAssertEqual(ForwarderStatus(outbox: outbox(pending: 3, dead: 2, error: 10, errorClass: .auth), inFlight: 0, authRefused: true).summary,
                       "outbox 3 (server refuses the token) · 2 dead")
    }
}
