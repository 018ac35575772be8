import EventLoop
@testable import Fleet
import XCTest

/// The sans-IO client machine, on a virtual clock: request limits, time limits, answers.
final class RequestConnectionTests: XCTestCase {
    let start = Instant(nanoseconds: 1_000_000_000)

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testAWholeRequestIsAnsweredThenClosedOnceWritten() {
        var machine = RequestConnection(limits: MetricsRequest.limits, acceptedAt: start)
        XCTAssertEqual(machine.received(bytes("GET /metrics HTTP/1.1\r\nHost: x\r\n"), at: start), .readMore)
        let head = bytes("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(machine.received(bytes("\r\n"), at: start + .milliseconds(1)), .answer(head: head))
        XCTAssertEqual(MetricsRequest.judge(head: head), .metrics)
        XCTAssertEqual(machine.respond(Array(repeating: 65, count: 10)), .write)
        XCTAssertEqual(machine.wrote(4, at: start + .milliseconds(2)), .write)
        XCTAssertEqual(machine.unsent.count, 6)
        XCTAssertEqual(machine.wrote(6, at: start + .milliseconds(3)), .finishWriting)
        XCTAssertEqual(machine.phase, .draining)
        XCTAssertEqual(machine.received(bytes("late bytes"), at: start + .milliseconds(4)), .readMore, "read and dropped")
        XCTAssertEqual(machine.hungUp(), .close(.answered))
        XCTAssertEqual(machine.phase, .closed)
    }

    func testATerminatorSplitAcrossReadsIsFound() {
        var machine = RequestConnection(limits: MetricsRequest.limits, acceptedAt: start)
        for byte in bytes("GET /metrics HTTP/1.0\r\n\r") {
            XCTAssertEqual(machine.received([byte], at: start), .readMore)
        }
        XCTAssertEqual(machine.received(bytes("\n"), at: start), .answer(head: bytes("GET /metrics HTTP/1.0\r\n\r\n")))
    }

    func testAnOversizedRequestIsRefusedAtTheLimit() {
        var machine = RequestConnection(limits: MetricsRequest.limits, acceptedAt: start)
        let limit = MetricsRequest.limits.maxRequestBytes
        XCTAssertEqual(machine.received(Array(repeating: UInt8(ascii: "a"), count: limit - 1), at: start), .readMore)
        XCTAssertEqual(machine.received(bytes("a"), at: start), .refuse(.tooLarge))
        XCTAssertEqual(machine.respond(MetricsRequest.tooLarge), .write)
        XCTAssertEqual(machine.wrote(MetricsRequest.tooLarge.count, at: start), .finishWriting)
        XCTAssertEqual(machine.tick(at: start + .seconds(5)), .close(.answered), "a client that never closes is closed at the limit")
    }

    func testAHugeSingleReadIsRefusedEvenWithATerminatorPastTheLimit() {
        var machine = RequestConnection(limits: StatusRequest.limits, acceptedAt: start)
        let big = Array(repeating: UInt8(ascii: "x"), count: StatusRequest.limits.maxRequestBytes + 36) + bytes("\n")
        XCTAssertEqual(machine.received(big, at: start), .refuse(.tooLarge))
    }

    func testASlowClientIsCutOffAtTheTimeLimit() {
        var machine = RequestConnection(limits: MetricsRequest.limits, acceptedAt: start)
        XCTAssertNil(machine.tick(at: start + .seconds(4)))
        XCTAssertEqual(machine.received(bytes("G"), at: start + .seconds(4)), .readMore)
        XCTAssertEqual(machine.tick(at: start + .seconds(5)), .close(.timedOut))
        XCTAssertNil(machine.tick(at: start + .seconds(6)), "closed once")
    }

    func testBytesAfterTheDeadlineCloseEvenWithoutATick() {
        var machine = RequestConnection(limits: MetricsRequest.limits, acceptedAt: start)
        XCTAssertEqual(machine.received(bytes("GET /metrics HTTP/1.1\r\n\r\n"), at: start + .seconds(5)), .close(.timedOut))
    }

    func testAClientThatDoesNotReadTheAnswerIsCutOffToo() {
        var machine = RequestConnection(limits: StatusRequest.limits, acceptedAt: start)
        XCTAssertEqual(machine.received(bytes("status json\n"), at: start), .answer(head: bytes("status json\n")))
        XCTAssertEqual(machine.respond(Array(repeating: 0, count: 1000)), .write)
        XCTAssertEqual(machine.wrote(10, at: start + .seconds(1)), .write)
        XCTAssertEqual(machine.tick(at: start + .seconds(5)), .close(.timedOut))
    }

    func testHangingUpEndsTheConnection() {
        var machine = RequestConnection(limits: StatusRequest.limits, acceptedAt: start)
        XCTAssertEqual(machine.received(bytes("sta"), at: start), .readMore)
        XCTAssertEqual(machine.hungUp(), .close(.hungUp))
    }

    func testMetricsRequestVerdicts() {
        func judge(_ line: String) -> MetricsRequest.Verdict { MetricsRequest.judge(head: bytes(line + "\r\nHost: h\r\n\r\n")) }
        XCTAssertEqual(judge("GET /metrics HTTP/1.1"), .metrics)
        XCTAssertEqual(judge("GET /metrics?x=1 HTTP/1.1"), .metrics)
        XCTAssertEqual(judge("POST /metrics HTTP/1.1"), .error(status: 405, reason: "Method Not Allowed"))
        XCTAssertEqual(judge("HEAD /metrics HTTP/1.1"), .error(status: 405, reason: "Method Not Allowed"))
        XCTAssertEqual(judge("GET / HTTP/1.1"), .error(status: 404, reason: "Not Found"))
        XCTAssertEqual(judge("GET /metricsx HTTP/1.1"), .error(status: 404, reason: "Not Found"))
        XCTAssertEqual(judge("GET /metrics HTTP/2.0"), .error(status: 505, reason: "HTTP Version Not Supported"))
        XCTAssertEqual(judge("GET  /metrics HTTP/1.1"), .error(status: 400, reason: "Bad Request"))
        XCTAssertEqual(judge("GET /metrics"), .error(status: 400, reason: "Bad Request"))
        XCTAssertEqual(judge("GET /m\u{7}etrics HTTP/1.1"), .error(status: 400, reason: "Bad Request"))
        let answer = String(decoding: MetricsRequest.errorResponse(status: 405, reason: "Method Not Allowed"), as: UTF8.self)
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        XCTAssertTrue(answer.contains("Allow: GET\r\n"))
        XCTAssertTrue(answer.contains("Connection: close\r\n\r\n"))
        XCTAssertTrue(answer.contains("Content-Length: 19\r\n"), answer)
    }

    func testStatusRequestVerdicts() {
        XCTAssertEqual(StatusRequest.judge(head: StatusRequest.line(.json)), .json)
        XCTAssertEqual(StatusRequest.judge(head: StatusRequest.line(.text)), .text)
        XCTAssertEqual(StatusRequest.judge(head: bytes("status json\r\n")), .json)
        XCTAssertNil(StatusRequest.judge(head: bytes("stop\n")))
        XCTAssertNil(StatusRequest.judge(head: bytes("status json extra\n")))
    }
}
