import EventLoop
import XCTest
@testable import Forwarder

/// The one-request-at-a-time driver the heartbeat and the roster share, on virtual time
/// against a scripted server: it hands back each request's result with the answer kept
/// for it, and reports nothing it did not start or has abandoned.
final class SingleRequestDriverTests: XCTestCase {
    private typealias Finished = (result: AttemptResult, answer: ReceivedAnswer?)

    private func request(answerLimit: Int? = nil) -> TransferRequest {
        TransferRequest(url: "https://attendance.example.org/v1/gateways/door-1/roster", headers: [], body: [],
                        timeout: .seconds(10), connectTimeout: .seconds(5), caBundle: nil,
                        isGet: true, answerLimit: answerLimit)
    }

    func testHandsBackEachResultWithTheAnswerKeptForIt() throws {
        let virtual = VirtualEventLoop()
        let server = ScriptedTransfers(loop: virtual.loop, latency: .seconds(1)) { index, _ in
            [.status(200), .status(503), .failure(TransportFailure(kind: .timeout, message: "timed out"))][index]
        }
        server.keptAnswer = { index in ReceivedAnswer(etag: "\"e-\(index)\"", body: Array("body \(index)".utf8)) }
        var finished: [Finished] = []
        let driver = SingleRequestDriver(transfers: server)
        driver.onFinished = { finished.append(($0, $1)) }

        try driver.start(request(answerLimit: 64))
        XCTAssertTrue(driver.isBusy)
        try virtual.advance(by: .milliseconds(999))
        XCTAssertTrue(finished.isEmpty)
        try virtual.advance(by: .milliseconds(1))
        XCTAssertFalse(driver.isBusy)
        XCTAssertEqual(finished.count, 1)
        XCTAssertEqual(finished.last?.result, .status(200))
        XCTAssertEqual(finished.last?.answer, ReceivedAnswer(etag: "\"e-0\"", body: Array("body 0".utf8)))

        try driver.start(request())
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(finished.count, 2)
        XCTAssertEqual(finished.last?.result, .status(503))
        XCTAssertNil(finished.last?.answer, "a request that keeps no answer gets none")

        try driver.start(request(answerLimit: 64))
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(finished.count, 3)
        XCTAssertEqual(finished.last?.result, .failure(TransportFailure(kind: .timeout, message: "timed out")))
        XCTAssertNil(finished.last?.answer, "no response, so no answer")
        XCTAssertEqual(server.sent.count, 3)
    }

    func testReportsNothingItDidNotStartOrHasCancelled() throws {
        let virtual = VirtualEventLoop()
        let server = ScriptedTransfers(loop: virtual.loop, latency: .seconds(1)) { _, _ in .status(200) }
        server.keptAnswer = { index in ReceivedAnswer(etag: "\"e-\(index)\"", body: []) }
        var finished: [Finished] = []
        let driver = SingleRequestDriver(transfers: server)
        driver.onFinished = { finished.append(($0, $1)) }

        // Callbacks for a transfer it never started (the ids ScriptedTransfers hands out
        // start at 1) are passed over, and leave the request in flight alone.
        try driver.start(request())
        server.onAnswer(999, ReceivedAnswer(etag: "\"stray\"", body: []))
        server.onCompletions([(999, .status(500))])
        XCTAssertTrue(finished.isEmpty)
        XCTAssertTrue(driver.isBusy)
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(finished.count, 1)
        XCTAssertEqual(finished.last?.result, .status(200))
        XCTAssertNil(finished.last?.answer, "the stray answer is not taken for this one's")

        // A cancelled request is never reported, and the next one starts at once.
        try driver.start(request(answerLimit: 64))
        driver.cancel()
        XCTAssertFalse(driver.isBusy)
        XCTAssertEqual(server.inFlightCount, 0)
        try virtual.advance(by: .seconds(5))
        XCTAssertEqual(finished.count, 1)
        try driver.start(request(answerLimit: 64))
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(finished.count, 2)
        XCTAssertEqual(finished.last?.answer?.etag, "\"e-2\"")
    }

    func testAStartTheSessionRefusesLeavesItIdle() throws {
        let virtual = VirtualEventLoop()
        let server = ScriptedTransfers(loop: virtual.loop) { _, _ in .status(204) }
        var finished: [Finished] = []
        let driver = SingleRequestDriver(transfers: server)
        driver.onFinished = { finished.append(($0, $1)) }

        server.refusal = .curl("out of memory")
        XCTAssertThrowsError(try driver.start(request()))
        XCTAssertFalse(driver.isBusy, "nothing is in flight, so the next request may start")
        server.refusal = nil
        try driver.start(request())
        try virtual.advance(by: .seconds(1))
        XCTAssertEqual(finished.map { $0.result }, [.status(204)], "the refused start is never reported")
    }
}
