import JournalFixtures
import XCTest
@testable import Journal

/// docs/security.md: keys and tokens never appear in logs, whichever destination.
final class SecretTests: XCTestCase {
    let secretValue = "5f4dcc3b5aa765d61d8327deb882cf99"

    func testSecretKeysAreMaskedOnEveryDestination() throws {
        let fields: KeyValuePairs<String, String> = [
            "key": secretValue, "token": secretValue, "irk": secretValue, "master_key": secretValue,
            "Token": secretValue, "tag_key": secretValue, "api_token": secretValue, "person_id": "u_1001",
        ]
        let journald = try DatagramReceiver()
        let stderrText = captureStandardError {
            LogSink(destination: .terminal).log(.info, "provisioned", fields)
            LogSink(destination: .journalStream).log(.info, "provisioned", fields)
            LogSink(destination: .journalSocket(try! UnixDatagramSender(address: journald.address))).log(.info, "provisioned", fields)
        }
        let datagram = String(decoding: try XCTUnwrap(journald.receive()), as: UTF8.self)
        for text in [stderrText, datagram] {
            XCTAssertFalse(text.contains(secretValue), text)
            XCTAssertTrue(text.contains("u_1001"), "other fields survive: \(text)")
        }
        XCTAssertTrue(stderrText.contains("token=*** "), stderrText)
        XCTAssertTrue(datagram.contains("\nMASTER_KEY=***\n"), datagram)
    }

    func testIdentifiersOfKeysAreNotSecrets() {
        XCTAssertFalse(LogRedaction.isSecret(key: "idempotency_key"))
        XCTAssertFalse(LogRedaction.isSecret(key: "key_id"))
        XCTAssertFalse(LogRedaction.isSecret(key: "tag"))
        XCTAssertFalse(LogRedaction.isSecret(key: "irk_received"), "enrolment's journal line: whether an IRK came")
        XCTAssertTrue(LogRedaction.isSecret(key: "IRK"))
    }

    func testSecretWrapperNeverPrints() {
        let token = Secret(secretValue)
        XCTAssertEqual("\(token)", "***")
        XCTAssertEqual(String(describing: token), "***")
        XCTAssertEqual(String(reflecting: token), "***")
        XCTAssertEqual(token.revealed, secretValue)
        let out = captureStandardError {
            LogSink(destination: .journalStream).log(.info, "loaded token \(token)", ["file": "/etc/beacon-gateway/token", "value": "\(token)"])
        }
        XCTAssertFalse(out.contains(secretValue), out)
    }
}
