#if canImport(Glibc)
import Glibc
#endif
import Config
import EventLoop
import GatewayCore
import HCI
import Store
import XCTest
@testable import Agent

/// The driver against a real SQLite store: what the door core decides at start is
/// performed in order, the event and the record it replaces in one transaction.
final class AgentSmokeTests: XCTestCase {
    func testAtStartTheCheckoutOfARemovedPersonIsStoredAndTheirRecordGoes() throws {
        let directory = FileManagerless.temporaryDirectory()
        let path = Store.path(stateDirectory: directory)
        let wall = SystemClock().wallMilliseconds
        do {
            let store = try Store(path: path)
            let record = PersistedPresence(
                personId: "gone", state: .present, visitStartWallMilliseconds: wall - 600_000,
                unconfirmedSinceWallMilliseconds: nil, lastSampleWallMilliseconds: wall - 60_000, tagId: "t-gone",
                address: BluetoothAddress(rawValue: 0x00_1B_DC_00_00_01), addressType: .publicDevice, txPower: nil)
            try store.commit { transaction throws(StoreError) in
                try transaction.savePresence(personId: "gone", record: record.encode())
            }
        }
        let configuration = GatewayConfiguration(gateway: .init(id: "door-1", stateDirectory: directory))
        let agent = GatewayAgent(options: .init(configurationPath: "gateway.toml", configuration: configuration, appVersion: "test"))
        agent.storage.openOrRetry()
        XCTAssertNil(agent.storage.trouble)
        agent.restorePresence()
        XCTAssertEqual(agent.core.counters.checkouts, 1)
        XCTAssertEqual(agent.core.uncommittedCount, 0)
        agent.storage.close()

        let store = try Store(path: path)
        let events = try store.list(states: [.pending], limit: 10)
        XCTAssertEqual(events.map(\.type), ["checkout"])
        XCTAssertEqual(events.first?.personId, "gone")
        XCTAssertEqual(events.first?.sequence, 1)
        XCTAssertNil(try store.loadPresence()["gone"], "the record went with the checkout")
    }
}
