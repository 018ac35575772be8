import EventLoop
import XCTest
import AdvertisingFixtures
import HCI
@testable import PresenceProof
import SplitMix

/// The test vector of docs/proof-protocol.md and the properties around it.
final class ProofProtocolTests: XCTestCase {
    private let master = MasterKey(bytes: Array(0x00 ... 0x1F))!
    private let nonce: [UInt8] = Array(0xA0 ... 0xAF)

    func testDerivedTagKeyMatchesTheSpecVector() {
        let key = TagKey.derive(masterKey: master, tagId: "tag-1001")
        XCTAssertEqual(HexText.lowercase(key.bytes), "f1e9df2e41d03c9a3efa343aa41ececa150033c77386570e763f550c45709ee6")
    }

    func testChallengeAndResponseMatchTheSpecVector() throws {
        let key = TagKey.derive(masterKey: master, tagId: "tag-1001")
        let challenge = try XCTUnwrap(ProofChallenge(nonce: nonce))
        XCTAssertEqual(HexText.lowercase(challenge.bytes), "01a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")
        let response = ProofProtocol.expectedResponse(to: challenge, key: key)
        XCTAssertEqual(HexText.lowercase(response), "018bef2bc2e37b2fdfe325a5ada5c2009b")
        XCTAssertNoThrow(try ProofProtocol.verify(response: bytes("018bef2bc2e37b2fdfe325a5ada5c2009b"), to: challenge, key: key))
    }

    func testVerificationRejectsEveryAlteration() throws {
        let key = TagKey.derive(masterKey: master, tagId: "tag-1001")
        let challenge = try XCTUnwrap(ProofChallenge(nonce: nonce))
        let good = ProofProtocol.expectedResponse(to: challenge, key: key)
        for index in good.indices {
            var bad = good
            bad[index] ^= 0x01
            XCTAssertThrowsError(try ProofProtocol.verify(response: bad, to: challenge, key: key), "byte \(index)")
        }
        XCTAssertThrowsError(try ProofProtocol.verify(response: good.dropLast(), to: challenge, key: key)) {
            XCTAssertEqual($0 as? ProofVerificationError, .wrongLength(16))
        }
        XCTAssertThrowsError(try ProofProtocol.verify(response: good + [0], to: challenge, key: key))
        XCTAssertThrowsError(try ProofProtocol.verify(response: [], to: challenge, key: key))
        var wrongVersion = good
        wrongVersion[0] = 0x02
        XCTAssertThrowsError(try ProofProtocol.verify(response: wrongVersion, to: challenge, key: key)) {
            XCTAssertEqual($0 as? ProofVerificationError, .unsupportedVersion(2))
        }
        // Another tag's key (a clone provisioned for tag-1002) does not pass.
        let other = TagKey.derive(masterKey: master, tagId: "tag-1002")
        XCTAssertNotEqual(other, key)
        XCTAssertThrowsError(try ProofProtocol.verify(response: good, to: challenge, key: other)) {
            XCTAssertEqual($0 as? ProofVerificationError, .macMismatch)
        }
    }

    func testChallengesAreFreshAndWellFormed() {
        var generator = SplitMix64(seed: 7)
        var seen = Set<[UInt8]>()
        for _ in 0 ..< 100 {
            let challenge = ProofProtocol.makeChallenge(using: &generator)
            XCTAssertEqual(challenge.bytes.count, 17)
            XCTAssertEqual(challenge.bytes.first, 0x01)
            XCTAssertEqual(Array(challenge.bytes.dropFirst()), challenge.nonce)
            seen.insert(challenge.nonce)
        }
        XCTAssertEqual(seen.count, 100)
        var system = SystemRandomNumberGenerator()
        XCTAssertNotEqual(ProofProtocol.makeChallenge(using: &system), ProofProtocol.makeChallenge(using: &system))
    }

    func testDerivationDependsOnEveryInput() {
        let a = TagKey.derive(masterKey: master, tagId: "tag-1001")
        var otherMasterBytes = master.bytes
        otherMasterBytes[31] ^= 0x80
        let b = TagKey.derive(masterKey: MasterKey(bytes: otherMasterBytes)!, tagId: "tag-1001")
        let c = TagKey.derive(masterKey: master, tagId: "tag-1001 ")
        let d = TagKey.derive(masterKey: master, tagId: "täg-1001")
        XCTAssertEqual(Set([a, b, c, d]).count, 4)
    }

    func testKeysNeverShowTheirBytes() {
        let key = TagKey.derive(masterKey: master, tagId: "tag-1001")
        XCTAssertFalse("\(key)".contains("f1e9"))
        XCTAssertFalse(String(reflecting: master).contains("000102"))
        XCTAssertEqual("\(master)", "MasterKey(********)")
    }

    func testMasterKeyFileRoundTrip() throws {
        var generator = SplitMix64(seed: 42)
        let key = MasterKey.generate(using: &generator)
        XCTAssertEqual(key.fileContent.count, 65)
        XCTAssertTrue(key.fileContent.hasSuffix("\n"))
        XCTAssertEqual(MasterKey(fileContent: Array(key.fileContent.utf8)), key)
        XCTAssertEqual(MasterKey(fileContent: Array(("  " + key.fileContent.uppercased() + "\r\n").utf8)), key)
        XCTAssertNil(MasterKey(fileContent: Array(key.fileContent.dropFirst().utf8)))
        XCTAssertNil(MasterKey(fileContent: Array((key.fileContent + "00").utf8)))
        XCTAssertNil(MasterKey(fileContent: []))
        XCTAssertNil(MasterKey(fileContent: Array(String(repeating: "g", count: 64).utf8)))
        XCTAssertNil(MasterKey(bytes: [1, 2, 3]))
        XCTAssertNil(TagKey(bytes: Array(repeating: 0, count: 31)))
    }

    func testServiceAndCharacteristicUUIDsAreTheSpecs() {
        XCTAssertEqual(HexText.lowercase(ProofProtocol.serviceUUID), "327c0001652e44d5b1549f067567c974")
        XCTAssertEqual(HexText.lowercase(ProofProtocol.challengeCharacteristicUUID), "327c0002652e44d5b1549f067567c974")
        XCTAssertEqual(HexText.lowercase(ProofProtocol.responseCharacteristicUUID), "327c0003652e44d5b1549f067567c974")
    }

    func testConstantTimeEqual() {
        XCTAssertTrue(constantTimeEqual([UInt8](), [UInt8]()))
        XCTAssertTrue(constantTimeEqual([1, 2, 3], [1, 2, 3] as [UInt8]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2, 4] as [UInt8]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2] as [UInt8]))
    }
}
