import Config
import GatewayCore
import PresenceProof
import XCTest
@testable import Agent

/// What the agent configures its door core with.
final class DoorSetupTests: XCTestCase {
    /// `[presence]` is the engine's own settings, handed over whole: a setting the agent
    /// copied field by field could be dropped (as `samplesPerTag` once was).
    func testPresenceSettingsReachTheCoreWhole() {
        let presence = PresenceSettings(
            enterRSSI: -61, exitRSSI: -66, window: .seconds(4), minSamples: 3, lostAfter: .seconds(11),
            leaveAfter: .seconds(200), awayAfter: .seconds(70), proofTTL: .seconds(900), samplesPerTag: 17
        )
        let configuration = GatewayConfiguration(gateway: .init(id: "door"), presence: presence)
        XCTAssertEqual(GatewayAgent.doorSetup(configuration, appVersion: "test").settings, presence)
    }

    /// `[site]` reaches the core with the sightings' keys derived from the master key; a
    /// `[site]` listing nobody, or none, is no neighbours.
    func testTheSiteReachesTheCoreWithItsKeys() throws {
        let master = Array(repeating: UInt8(0x42), count: 32)
        var configuration = GatewayConfiguration(gateway: .init(id: "door-1"),
                                                 security: .init(masterKeyFile: "/k", masterKey: master))
        XCTAssertNil(GatewayAgent.doorSetup(configuration, appVersion: "test").neighbours)
        configuration.site = .init(neighbours: .doors([]))
        XCTAssertNil(GatewayAgent.doorSetup(configuration, appVersion: "test").neighbours)
        configuration.site = .init(neighbours: .doors(["door-2"]), marginDB: 8, handover: .seconds(3))
        let neighbours = try XCTUnwrap(GatewayAgent.doorSetup(configuration, appVersion: "test").neighbours)
        XCTAssertEqual(neighbours, NeighbourSetup(neighbours: .doors(["door-2"]), marginDB: 8, handover: .seconds(3),
                                                  keys: SightingKeys(masterKey: try XCTUnwrap(MasterKey(bytes: master)))))
        XCTAssertNotEqual(neighbours.keys, SightingKeys(masterKey: try XCTUnwrap(MasterKey(bytes: Array(repeating: 0x43, count: 32)))))
    }
}
