import CCurl
import XCTest
@testable import Forwarder

final class RequestHeadersTests: XCTestCase {
    func testHeadersOfTheSpec() throws {
        let configuration = ForwarderConfiguration(url: "https://attendance.example.org/", deviceId: "door-lab-301",
                                                   appVersion: "1.0.0", token: Array("s3cret".utf8))
        let lines = try XCTUnwrap(RequestHeaders.lines(idempotencyKey: "39c4a6ba", configuration: configuration))
        XCTAssertTrue(lines.contains("Content-Type: application/json"))
        XCTAssertTrue(lines.contains("Idempotency-Key: 39c4a6ba"))
        XCTAssertTrue(lines.contains("X-Device-Id: door-lab-301"))
        XCTAssertTrue(lines.contains("X-App-Version: 1.0.0"))
        XCTAssertTrue(lines.contains("Authorization: Bearer s3cret"))
        XCTAssertEqual(configuration.eventsURL, "https://attendance.example.org/v1/attendance/events")
    }

    func testNoTokenNoAuthorization() throws {
        let configuration = ForwarderConfiguration(url: "http://127.0.0.1:8080", deviceId: "d", appVersion: "1")
        let lines = try XCTUnwrap(RequestHeaders.lines(idempotencyKey: "k", configuration: configuration))
        XCTAssertFalse(lines.contains { $0.hasPrefix("Authorization") })
        XCTAssertEqual(configuration.eventsURL, "http://127.0.0.1:8080/v1/attendance/events")
    }

    func testHeaderInjectionIsRefused() {
        let configuration = ForwarderConfiguration(url: "http://h", deviceId: "d", appVersion: "1")
        XCTAssertNil(RequestHeaders.lines(idempotencyKey: "k\r\nX-Evil: 1", configuration: configuration))
        XCTAssertNil(RequestHeaders.lines(idempotencyKey: "", configuration: configuration))
        var bad = configuration
        bad.token = Array("tok\nen".utf8)
        XCTAssertNil(RequestHeaders.lines(idempotencyKey: "k", configuration: bad))
    }

    func testConnectTimeoutDefaultsFromTheTotal() {
        XCTAssertEqual(ForwarderConfiguration(url: "http://h", deviceId: "d", appVersion: "1", timeout: .seconds(2)).connectTimeout, .seconds(2))
        XCTAssertEqual(ForwarderConfiguration(url: "http://h", deviceId: "d", appVersion: "1", timeout: .seconds(10)).connectTimeout, .seconds(3))
        XCTAssertEqual(ForwarderConfiguration(url: "http://h", deviceId: "d", appVersion: "1", maxInFlight: 0).maxInFlight, 1)
    }

    func testCurlErrorsMapToActionableKinds() {
        XCTAssertEqual(HTTPTransfers.failure(code: CURLE_OPERATION_TIMEDOUT, message: "m").kind, .timeout)
        XCTAssertEqual(HTTPTransfers.failure(code: CURLE_COULDNT_CONNECT, message: "m").kind, .connect)
        XCTAssertEqual(HTTPTransfers.failure(code: CURLE_PEER_FAILED_VERIFICATION, message: "m").kind, .tls)
        XCTAssertEqual(HTTPTransfers.failure(code: CURLE_GOT_NOTHING, message: "m").kind, .network)
    }
}
