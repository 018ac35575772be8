import XCTest
@testable import Forwarder

final class RetryAfterTests: XCTestCase {
    // 1994-11-06T08:49:37Z, RFC 9110's example date.
    let example: Int64 = 784_111_777

    func testDelaySeconds() {
        XCTAssertEqual(RetryAfter.delay("120", nowMillis: 0), .seconds(120))
        XCTAssertEqual(RetryAfter.delay(" 2 ", nowMillis: 0), .seconds(2))
        XCTAssertEqual(RetryAfter.delay("0", nowMillis: 0), .seconds(0))
        XCTAssertEqual(RetryAfter.delay("99999999999999999999999", nowMillis: 0), .seconds(999_999_999))
    }

    func testTheThreeHTTPDateForms() {
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), example)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), example)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), example)
        XCTAssertEqual(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
        XCTAssertEqual(HTTPDate.parse("Sat, 29 Feb 2020 23:59:59 GMT"), 1_583_020_799)
    }

    func testHTTPDateIsRelativeToNow() {
        let now = (example - 30) * 1_000 + 250
        XCTAssertEqual(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", nowMillis: now), .milliseconds(29_750))
        // A date in the past means "now".
        XCTAssertEqual(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", nowMillis: (example + 5) * 1_000), .zero)
    }

    func testGarbageIsIgnored() {
        for value in ["", "soon", "-5", "1.5", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
                      "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
                      String(repeating: "9 ", count: 100)] {
            XCTAssertNil(RetryAfter.delay(value, nowMillis: 0), value)
        }
    }

    func testRetryAfterHeaderIsPickedFromTheFinalResponse() {
        let transfer = HTTPTransfers.Transfer(id: 1, easy: UnsafeMutableRawPointer(bitPattern: 8)!)
        func feed(_ line: String) {
            Array(line.utf8).withUnsafeBytes { transfer.noteHeader($0) }
        }
        feed("HTTP/1.1 503 Service Unavailable\r\n")
        feed("retry-AFTER: 2\r\n")
        XCTAssertEqual(transfer.retryAfter, " 2")
        XCTAssertEqual(RetryAfter.delay(transfer.retryAfter!, nowMillis: 0), .seconds(2))
        feed("HTTP/2 201\r\n")
        XCTAssertNil(transfer.retryAfter)
        feed("Retry-After-Not: 5\r\n")
        XCTAssertNil(transfer.retryAfter)
    }
}
