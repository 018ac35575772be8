#if canImport(Glibc)
import Glibc
#endif
import Config
import HCI
import XCTest
@testable import Agent
import PresenceProof

/// Which configured tags the agent may connect to, and with which key.
final class ConnectionTagsTests: XCTestCase {
    private func load(_ text: String) throws -> GatewayConfiguration {
        let directory = FileManagerless.temporaryDirectory()
        let keyPath = directory + "/master.key"
        try FileManagerless.write(keyPath, String(repeating: "ab", count: 32) + "\n", mode: 0o600)
        let configPath = directory + "/gateway.toml"
        try FileManagerless.write(configPath, text.replacingOccurrences(of: "KEYFILE", with: keyPath), mode: 0o644)
        return try GatewayConfiguration.load(path: configPath)
    }

    func testOnlyProofAndConnectionTrackedTagsWithKeysAndAddresses() throws {
        let configuration = try load("""
        [gateway]
        id = "door"
        [bluetooth]
        transport = "tcp:127.0.0.1:9"
        [server]
        url = "http://127.0.0.1:9"
        [security]
        master_key_file = "KEYFILE"
        [[person]]
        id = "plain"
          [[person.tag]]
          id = "t-plain"
          address = "C0:00:00:00:00:01"
        [[person]]
        id = "proven"
        require_proof = true
          [[person.tag]]
          id = "t-proof"
          ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"
          address = "00:11:22:33:44:55"
        [[person]]
        id = "tracked"
          [[person.tag]]
          id = "t-tracked"
          address = "C0:00:00:00:00:03"
          track = "connection"
        """)
        let tags = GatewayAgent.connectionTags(configuration)
        XCTAssertEqual(tags.keys.sorted(), [1, 2], "tag indices as the matcher numbers them; the plain tag needs no connection")
        let proof = try XCTUnwrap(tags[1])
        XCTAssertEqual(proof.tagId, "t-proof")
        XCTAssertTrue(proof.requireProof)
        XCTAssertFalse(proof.tracked)
        let master = try XCTUnwrap(MasterKey(bytes: Array(repeating: 0xAB, count: 32)))
        XCTAssertEqual(proof.key, TagKey.derive(masterKey: master, tagId: "t-proof"))
        XCTAssertEqual(proof.configuredPeer, ConnectPeer(address: BluetoothAddress("00:11:22:33:44:55")!, addressType: .publicDevice))
        let tracked = try XCTUnwrap(tags[2])
        XCTAssertTrue(tracked.tracked)
        XCTAssertEqual(tracked.configuredPeer?.addressType, .randomDevice)
    }
}
