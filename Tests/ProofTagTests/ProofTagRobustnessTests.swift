import EventLoop
import Host
import PresenceProof
import ProofTag
import SplitMix
import XCTest

/// A hostile door against the reference tag: challenges of every length and version
/// byte, reads at any moment. Response only ever reads as the answer to the last
/// challenge accepted, or not at all.
final class ProofTagRobustnessTests: XCTestCase {
    func testResponseIsTheAnswerToTheLastAcceptedChallengeOrNothing() throws {
        let key = TagKey(bytes: Array(repeating: 7, count: 32))!
        var tag = try ProofTag(name: "tag-7", key: key)
        var random = SplitMix64(seed: 0x7A6_0001)
        var expected: [UInt8]?
        var now = Instant.zero
        var answered = 0
        var refused = 0
        func le(_ handle: UInt16) -> [UInt8] { [UInt8(handle & 0xFF), UInt8(handle >> 8)] }
        for step in 0 ..< 5_000 {
            now += .milliseconds(20)
            if Bool.random(using: &random) {
                let length = [0, 1, 16, 17, 17, 17, 18, 20][Int.random(in: 0 ..< 8, using: &random)]
                var value = (0 ..< length).map { _ in UInt8.random(in: 0 ... 255, using: &random) }
                if !value.isEmpty, Bool.random(using: &random) { value[0] = ProofProtocol.version }
                let actions = tag.receive([0x12] + le(tag.challengeHandle) + value, security: .unencrypted, now: now)
                let sent = actions.compactMap { if case .server(.send(let pdu)) = $0 { pdu } else { nil } }
                XCTAssertEqual(sent.count, 1, "step \(step)")
                if sent.first == [0x13] {
                    answered += 1
                    let challenge = try XCTUnwrap(ProofChallenge(nonce: Array(value.dropFirst())))
                    expected = ProofProtocol.expectedResponse(to: challenge, key: key)
                    XCTAssertTrue(actions.contains(.challengeAnswered))
                } else {
                    refused += 1
                    expected = nil
                    XCTAssertEqual(sent.first?.prefix(2), [0x01, 0x12], "step \(step)")
                }
            } else {
                let answer = tag.receive([0x0A] + le(tag.responseHandle), security: .unencrypted, now: now)
                if let expected {
                    XCTAssertEqual(answer, [.server(.send([0x0B] + expected))], "step \(step)")
                } else {
                    XCTAssertEqual(answer, [.server(.send([0x01, 0x0A] + le(tag.responseHandle) + [0x0E]))], "step \(step)")
                }
            }
        }
        XCTAssertGreaterThan(answered, 0)
        XCTAssertGreaterThan(refused, 0)
        XCTAssertFalse(tag.server.isClosed)
    }
}
