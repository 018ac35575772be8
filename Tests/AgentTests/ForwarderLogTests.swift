import Forwarder
import Journal
import XCTest
@testable import Agent

/// Idempotency keys are identifiers, not secrets: the operator matches a dead letter to
/// the server's records by its key, so the key must survive the log's redaction.
final class ForwarderLogTests: XCTestCase {
    let key = "39c4a6ba3fb70d9bc22431a88a6fce66ab54987301cacbeaf121e556553d5805"

    func testIdempotencyKeysAreLoggedInTheClear() {
        let events: [ForwarderEvent] = [
            .delivered(sequence: 1, key: key, status: 201),
            .rejected(sequence: 2, key: key, status: 409),
            .deadLetter(sequence: 3, key: key, status: 422),
            .retrying(sequence: 4, key: key, errorClass: .server, message: "HTTP 503", delayMillis: 100),
        ]
        for event in events {
            let shown = event.logLine.fields.map { LogRedaction.value($0.value, forKey: $0.key) }
            XCTAssertTrue(shown.contains(key), "\(event): \(event.logLine.fields)")
        }
    }

    func testRealSecretsStayMasked() {
        for name in ["key", "token", "irk", "master_key"] {
            XCTAssertEqual(LogRedaction.value("secret", forKey: name), LogRedaction.mask)
        }
    }
}
