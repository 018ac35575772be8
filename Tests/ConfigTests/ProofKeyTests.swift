import Config
import XCTest
import PresenceProof

final class ProofKeyTests: XCTestCase {
    let master = [UInt8](repeating: 0x11, count: 32)
    let own = [UInt8](repeating: 0x22, count: 32)

    func configuration(masterKey: [UInt8]?) -> GatewayConfiguration {
        GatewayConfiguration(gateway: .init(id: "door-1"), security: .init(masterKey: masterKey))
    }

    func testTheTagsOwnKeyWinsOverTheMasterKey() throws {
        let tag = Tag(id: "tag-1", identities: [], key: own)
        XCTAssertEqual(configuration(masterKey: master).proofKey(for: tag), TagKey(bytes: own))
        XCTAssertEqual(configuration(masterKey: nil).proofKey(for: tag), TagKey(bytes: own))
    }

    func testWithoutItsOwnKeyATagGetsTheOneDerivedForItsId() throws {
        let derived = TagKey.derive(masterKey: try XCTUnwrap(MasterKey(bytes: master)), tagId: "tag-1")
        let key = configuration(masterKey: master).proofKey(for: Tag(id: "tag-1", identities: []))
        XCTAssertEqual(key, derived)
        XCTAssertNotEqual(configuration(masterKey: master).proofKey(for: Tag(id: "tag-2", identities: [])), derived)
    }

    func testWithNeitherThereIsNoKey() {
        XCTAssertNil(configuration(masterKey: nil).proofKey(for: Tag(id: "tag-1", identities: [])))
    }
}
