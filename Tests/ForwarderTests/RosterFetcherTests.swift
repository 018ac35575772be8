import EventLoop
import Fleet
import XCTest
@testable import Forwarder

/// The roster request (see docs/fleet.md) against a real loopback server: a GET with the
/// events' credentials and `If-None-Match`, the answer's ETag and body kept, 304, an
/// answer over the limit and other statuses as failures.
final class RosterFetcherTests: ForwarderTestCase {
    func testGetWithETagThen304ThenAnAnswerTooLargeThenAServerError() throws {
        let roster = #"{"revision": "r-1", "persons": []}"#
        let server = try LoopbackServer { index, _ in
            switch index {
            case 0: LoopbackServer.Answer(status: 200, headers: ["ETag:  \"e-1\" "], body: roster)
            case 1: LoopbackServer.Answer(status: 304, headers: ["ETag: \"e-1\""])
            case 2: LoopbackServer.Answer(status: 200, body: String(repeating: "x", count: 100))
            default: LoopbackServer.Answer(status: 503)
            }
        }
        defer { server.stop() }
        let loop = EventLoop()
        var outcomes: [RosterAnswer] = []
        let configuration = ForwarderConfiguration(url: server.url + "/", deviceId: "door-1", appVersion: "0.1.0",
                                                   token: Array("secret-token".utf8))
        let fetcher = try RosterFetcher(loop: loop, configuration: configuration, answerLimit: 64) { outcomes.append($0) }
        XCTAssertEqual(configuration.rosterURL, server.url + "/v1/gateways/door-1/roster")

        fetcher.fetch(ifNoneMatch: nil)
        XCTAssertTrue(fetcher.isFetching)
        fetcher.fetch(ifNoneMatch: nil) // one at a time: ignored while one is in flight
        run(loop) { outcomes.count == 1 }
        XCTAssertEqual(outcomes.last, .roster(etag: "\"e-1\"", body: Array(roster.utf8)))
        let first = server.heads[0]
        XCTAssertTrue(first.hasPrefix("GET /v1/gateways/door-1/roster HTTP/1.1\r\n"), first)
        XCTAssertTrue(first.contains("\r\nAuthorization: Bearer secret-token"), first)
        XCTAssertTrue(first.contains("\r\nX-Device-Id: door-1"), first)
        XCTAssertFalse(first.contains("If-None-Match"), first)
        XCTAssertFalse(first.contains("Content-Type"), "a GET has no body")
        XCTAssertFalse(first.contains("Idempotency-Key"), first)

        fetcher.fetch(ifNoneMatch: "\"e-1\"")
        run(loop) { outcomes.count == 2 }
        XCTAssertEqual(outcomes.last, .notModified)
        XCTAssertTrue(server.heads[1].contains("\r\nIf-None-Match: \"e-1\""), server.heads[1])

        // An ETag that cannot go into a header safely is not sent: the server answers in full.
        fetcher.fetch(ifNoneMatch: "\"e\r\nX-Evil: 1\"")
        run(loop) { outcomes.count == 3 }
        XCTAssertEqual(outcomes.last, .failed("the answer is larger than 64 bytes"))
        XCTAssertFalse(server.heads[2].contains("If-None-Match"), server.heads[2])
        XCTAssertFalse(server.heads[2].contains("X-Evil"), server.heads[2])

        fetcher.fetch(ifNoneMatch: nil)
        run(loop) { outcomes.count == 4 }
        XCTAssertEqual(outcomes.last, .failed("HTTP 503"))
        XCTAssertFalse(fetcher.isFetching)
    }
}
