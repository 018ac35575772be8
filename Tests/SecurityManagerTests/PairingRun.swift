import BluetoothCrypto
import EventLoop
import HCI
@testable import SecurityManager
import XCTest

/// One responder and one scripted phone, stepped phase by phase on a virtual clock; each
/// phase asserts what a genuine exchange looks like, so a test can stop at any point and
/// then misbehave.
struct PairingRun {
    var responder: PairingResponder
    var phone: ScriptedInitiator
    var now = Instant.zero

    init(responder: PairingResponder = Fixture.responder(), phone: ScriptedInitiator = ScriptedInitiator()) {
        self.responder = responder
        self.phone = phone
    }

    mutating func feed(_ pdu: [UInt8]) -> [PairingAction] {
        now += .milliseconds(20)
        return responder.receive(pdu, now: now)
    }

    /// Pairing Request → Pairing Response.
    @discardableResult
    mutating func features(file: StaticString = #filePath, line: UInt = #line) -> [PairingAction] {
        let actions = feed(phone.pairingRequest)
        XCTAssertEqual(actions.sent.count, 1, file: file, line: line)
        XCTAssertTrue(phone.take(response: actions.sent.first ?? []), "a Pairing Response", file: file, line: line)
        XCTAssertEqual(actions.last, .armTimer(now + .seconds(30)), file: file, line: line)
        return actions
    }

    /// Public keys both ways, then the responder's confirm.
    @discardableResult
    mutating func publicKeys(file: StaticString = #filePath, line: UInt = #line) -> [PairingAction] {
        let actions = feed(phone.publicKey)
        let sent = actions.sent
        XCTAssertEqual(sent.count, 2, file: file, line: line)
        XCTAssertTrue(phone.take(publicKey: sent.first ?? []), "a valid public key", file: file, line: line)
        XCTAssertTrue(phone.take(confirm: sent.last ?? []), "a confirm value", file: file, line: line)
        return actions
    }

    /// Randoms both ways; the phone checks the confirm value.
    @discardableResult
    mutating func randoms(file: StaticString = #filePath, line: UInt = #line) -> [PairingAction] {
        let actions = feed(phone.random)
        XCTAssertEqual(actions.sent.count, 1, file: file, line: line)
        XCTAssertTrue(phone.take(random: actions.sent.first ?? []), "the random opens the confirm value", file: file, line: line)
        return actions
    }

    /// The phone's LTK request and the controller's Encryption Change.
    mutating func encrypt(file: StaticString = #filePath, line: UInt = #line) -> [PairingAction] {
        now += .milliseconds(20)
        XCTAssertEqual(responder.longTermKeyRequested(random: 0, encryptedDiversifier: 0, now: now), [.replyLongTermKey(phone.ltk!)],
                       "the LTK both sides derived", file: file, line: line)
        return responder.encryptionChanged(status: .success, enabled: true, now: now)
    }
}
