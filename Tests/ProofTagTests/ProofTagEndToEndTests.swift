import Advertisements
import EventLoop
import Host
import PresenceProof
import ProofTag
import XCTest

/// The reference tag against the door's own client and verification (docs/proof-protocol.md).
final class ProofTagEndToEndTests: XCTestCase {
    private static let master = MasterKey(bytes: Array(0 ..< 32))!
    private static let key = TagKey.derive(masterKey: master, tagId: "tag-1001")
    private static let vectorChallenge = ProofChallenge(nonce: Array(0xA0 ... 0xAF))!

    private static func request(_ challenge: ProofChallenge, cached: GATTWriteReadExchange.Handles? = nil) -> GATTWriteReadExchange.Request {
        .init(service: .presenceProofService, writeCharacteristic: .proofChallenge, readCharacteristic: .proofResponse,
              value: challenge.bytes, cachedHandles: cached)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    func testTheDoorVerifiesTheTagsAnswerWithTheRightKeyOnly() throws {
        var pair = InMemoryBearerPair(tag: try ProofTag(name: "tag-1001", key: Self.key))
        let completion = try XCTUnwrap(pair.run(Self.request(Self.vectorChallenge))).get()
        XCTAssertEqual(Self.hex(completion.value), "018bef2bc2e37b2fdfe325a5ada5c2009b")
        XCTAssertNoThrow(try ProofProtocol.verify(response: completion.value, to: Self.vectorChallenge, key: Self.key))
        let otherKey = TagKey.derive(masterKey: Self.master, tagId: "tag-1002")
        XCTAssertThrowsError(try ProofProtocol.verify(response: completion.value, to: Self.vectorChallenge, key: otherKey)) {
            XCTAssertEqual($0 as? ProofVerificationError, .macMismatch)
        }
        XCTAssertEqual(completion.handles, .init(write: pair.tag.challengeHandle, read: pair.tag.responseHandle))
        // Find By Type Value, two Read By Type (one 128-bit declaration fills ATT_MTU 23), write, read;
        // 40 ms each on the virtual clock.
        XCTAssertEqual(completion.attRequests, 5)
        XCTAssertEqual(completion.timings.discovery, .milliseconds(120))
        XCTAssertEqual(completion.timings.write, .milliseconds(40))
        XCTAssertEqual(completion.timings.read, .milliseconds(40))
        XCTAssertEqual(pair.tagActions.filter { $0 == .challengeAnswered }.count, 1)
        XCTAssertFalse(pair.client.bearer.isClosed)
    }

    func testATagWithAnotherKeyFailsTheDoorsCheck() throws {
        let clone = TagKey(bytes: Array(repeating: 0x42, count: 32))!
        var pair = InMemoryBearerPair(tag: try ProofTag(name: "tag-1001", key: clone))
        var generator = SystemRandomNumberGenerator()
        let challenge = ProofProtocol.makeChallenge(using: &generator)
        let completion = try XCTUnwrap(pair.run(Self.request(challenge))).get()
        XCTAssertThrowsError(try ProofProtocol.verify(response: completion.value, to: challenge, key: Self.key)) {
            XCTAssertEqual($0 as? ProofVerificationError, .macMismatch)
        }
        XCTAssertNoThrow(try ProofProtocol.verify(response: completion.value, to: challenge, key: clone))
    }

    func testCachedHandlesAndFreshChallengesOnOneConnection() throws {
        var pair = InMemoryBearerPair(tag: try ProofTag(name: "tag-1001", key: Self.key))
        let first = try XCTUnwrap(pair.run(Self.request(Self.vectorChallenge))).get()
        var generator = SystemRandomNumberGenerator()
        for _ in 0 ..< 5 {
            let challenge = ProofProtocol.makeChallenge(using: &generator)
            let again = try XCTUnwrap(pair.run(Self.request(challenge, cached: first.handles))).get()
            XCTAssertEqual(again.attRequests, 2)
            XCTAssertTrue(again.usedCache)
            XCTAssertNoThrow(try ProofProtocol.verify(response: again.value, to: challenge, key: Self.key))
        }
    }

    func testTheTagRefusesWhatIsNoChallenge() throws {
        var pair = InMemoryBearerPair(tag: try ProofTag(name: "tag-1001", key: Self.key))
        let handles = GATTWriteReadExchange.Handles(write: pair.tag.challengeHandle, read: pair.tag.responseHandle)
        // Nothing to read before a challenge.
        XCTAssertEqual(pair.run(GATTWriteReadExchange.Request(service: .presenceProofService, writeCharacteristic: .proofChallenge,
                                                              readCharacteristic: .proofResponse, value: [], cachedHandles: handles)),
                       .failure(.gatt(.attError(request: .writeRequest, handle: handles.write, code: .invalidAttributeValueLength))))
        XCTAssertEqual(pair.tag.server.storedValue(handles.read), .unavailable(.unlikelyError))
        let shortChallenge = GATTWriteReadExchange.Request(service: .presenceProofService, writeCharacteristic: .proofChallenge,
                                                           readCharacteristic: .proofResponse, value: Array(Self.vectorChallenge.bytes.prefix(16)),
                                                           cachedHandles: handles)
        XCTAssertEqual(pair.run(shortChallenge), .failure(.gatt(.attError(request: .writeRequest, handle: handles.write, code: .invalidAttributeValueLength))))
        var version2 = Self.vectorChallenge.bytes
        version2[0] = 0x02
        XCTAssertEqual(pair.run(.init(service: .presenceProofService, writeCharacteristic: .proofChallenge, readCharacteristic: .proofResponse,
                                      value: version2, cachedHandles: handles)),
                       .failure(.gatt(.attError(request: .writeRequest, handle: handles.write, code: .valueNotAllowed))))
        // A valid one, then a refused one: the old answer is gone.
        XCTAssertNoThrow(try pair.run(Self.request(Self.vectorChallenge, cached: handles))?.get())
        _ = pair.run(shortChallenge)
        XCTAssertEqual(pair.tag.server.storedValue(handles.read), .unavailable(.unlikelyError))
        XCTAssertEqual(pair.tagActions.filter { if case .challengeRefused = $0 { true } else { false } }.count, 4)
        // Too long is refused the same way, and clears the answer too.
        XCTAssertNoThrow(try pair.run(Self.request(Self.vectorChallenge, cached: handles))?.get())
        XCTAssertEqual(pair.run(.init(service: .presenceProofService, writeCharacteristic: .proofChallenge, readCharacteristic: .proofResponse,
                                      value: Self.vectorChallenge.bytes + [0], cachedHandles: handles)),
                       .failure(.gatt(.attError(request: .writeRequest, handle: handles.write, code: .invalidAttributeValueLength))))
        XCTAssertEqual(pair.tag.server.storedValue(handles.read), .unavailable(.unlikelyError))
        XCTAssertEqual(pair.tagActions.filter { if case .challengeRefused = $0 { true } else { false } }.count, 5)
    }
}
