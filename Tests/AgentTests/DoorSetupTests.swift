import Config
import GatewayCore
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
}
