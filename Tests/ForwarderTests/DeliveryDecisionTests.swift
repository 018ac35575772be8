import Store
import XCTest
@testable import Forwarder

final class DeliveryDecisionTests: XCTestCase {
    private func classify(_ status: Int, retryAfter: String? = nil) -> DeliveryDecision {
        DeliveryDecision.classify(.response(status: status, retryAfter: retryAfter))
    }

    func testSuccessAnswers() {
        XCTAssertEqual(classify(201), .sent(status: 201))
        XCTAssertEqual(classify(200), .sent(status: 200))
    }

    func testConflictIsRejected() {
        XCTAssertEqual(classify(409), .rejected(status: 409))
    }

    func testOtherClientErrorsAreDeadLetters() {
        for status in [400, 404, 410, 413, 415, 422, 451, 499] {
            XCTAssertEqual(classify(status), .dead(status: status), "\(status)")
        }
    }

    func testAuthIsRetriedWithTheLongBackoff() {
        for status in [401, 403] {
            guard case let .retry(errorClass, _, _, long) = classify(status) else { return XCTFail("\(status)") }
            XCTAssertEqual(errorClass, .auth)
            XCTAssertTrue(long)
        }
    }

    func testThrottlingAndServerErrorsAreRetriedWithRetryAfter() {
        for (status, expected) in [(408, DeliveryErrorClass.throttled), (429, .throttled), (500, .server), (502, .server), (503, .server), (599, .server)] {
            guard case let .retry(errorClass, _, retryAfter, long) = classify(status, retryAfter: "7") else { return XCTFail("\(status)") }
            XCTAssertEqual(errorClass, expected, "\(status)")
            XCTAssertEqual(retryAfter, "7")
            XCTAssertFalse(long)
        }
    }

    func testAnswersTheSpecDoesNotNameAreRetriedNotLost() {
        for status in [0, 100, 202, 204, 301, 302, 304, 600, 999] {
            guard case let .retry(errorClass, _, _, _) = classify(status) else { return XCTFail("\(status)") }
            XCTAssertEqual(errorClass, .protocolError, "\(status)")
        }
    }

    func testTransportFailuresAreRetriedWithTheirClass() {
        let cases: [(TransportFailure.Kind, DeliveryErrorClass)] = [
            (.timeout, .timeout), (.connect, .network), (.network, .network), (.tls, .tls), (.protocolError, .protocolError),
        ]
        for (kind, expected) in cases {
            let decision = DeliveryDecision.classify(.failure(TransportFailure(kind: kind, message: "boom")))
            XCTAssertEqual(decision, .retry(expected, message: "boom", retryAfter: nil, long: false))
        }
    }
}
