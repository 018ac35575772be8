#if canImport(Glibc)
import Glibc
#endif
import EventLoop
import Journal
import Store
import XCTest
@testable import Agent

/// The store's driver on virtual time with a real SQLite file: a state directory that
/// cannot be made is disk trouble, tried again on the backoff, and once it can be the
/// store opens, the trouble ends and the door is told, in that order.
final class StoreDriverTests: XCTestCase {
    private var told: [String] = []
    private var uncommitted = 0

    private func makeDriver(_ loop: EventLoop, stateDirectory: String) -> StoreDriver {
        StoreDriver(
            loop: loop, log: LogSink(minimumLevel: .error, destination: .terminal), stateDirectory: stateDirectory,
            hooks: StoreDriver.Hooks(
                troubleChanged: { [unowned self] inTrouble in self.told.append(inTrouble ? "trouble" : "stored again") },
                recovered: { [unowned self] _ in self.told.append("recovered") },
                uncommittedCount: { [unowned self] in self.uncommitted },
                retryCommits: { [unowned self] in self.told.append("retry commits") },
                closing: { [unowned self] in self.told.append("closing") },
                reopened: { [unowned self] _ in self.told.append("reopened") },
                heldEventsStored: { [unowned self] in self.told.append("held stored") },
                hasSinks: { true },
                stopping: { [unowned self] in self.told.append("stopping") }
            )
        )
    }

    /// A driver whose state directory cannot be made: a file stands where its parent
    /// should be, so mkdir fails (ENOTDIR) as it would on a card gone read-only, whoever
    /// runs the test. `fix` puts a directory there.
    private func blockedDriver(_ loop: EventLoop) throws -> (StoreDriver, fix: () -> Void) {
        let blocker = FileManagerless.temporaryDirectory() + "/var"
        try FileManagerless.write(blocker, "not a directory", mode: 0o600)
        return (makeDriver(loop, stateDirectory: blocker + "/state"), {
            XCTAssertEqual(unlink(blocker), 0)
            XCTAssertEqual(mkdir(blocker, 0o750), 0)
        })
    }

    func testAStateDirectoryThatCannotBeMadeIsTroubleTriedAgainUntilTheStoreOpens() throws {
        let virtual = VirtualEventLoop()
        let (driver, fix) = try blockedDriver(virtual.loop)
        driver.openOrRetry()
        XCTAssertNil(driver.store)
        XCTAssertNotNil(driver.trouble)
        XCTAssertEqual(told, ["trouble"])

        // Still broken at the first retries: no second "trouble", nothing reopened.
        try virtual.advance(by: .seconds(3))
        XCTAssertEqual(told, ["trouble", "closing", "closing"])
        XCTAssertNil(driver.store)

        // The card is fixed; the next retry (on the doubled backoff) opens the store.
        fix()
        try virtual.advance(by: .seconds(4))
        XCTAssertNotNil(driver.store)
        XCTAssertNil(driver.trouble)
        XCTAssertEqual(Array(told.suffix(3)), ["closing", "reopened", "stored again"], "\(told)")

        // Nothing more once it works.
        let settled = told
        try virtual.advance(by: .seconds(120))
        XCTAssertEqual(told, settled)
        driver.close()
        XCTAssertNil(driver.store)
    }

    func testDecisionsHeldDuringTroubleAreCommittedByTheDoorAtTheRetry() throws {
        let virtual = VirtualEventLoop()
        let (driver, fix) = try blockedDriver(virtual.loop)
        driver.openOrRetry()
        uncommitted = 2
        fix()
        try virtual.advance(by: .seconds(1))
        // Opened, then the held decisions go to the door to commit (its commit's success
        // is what ends the trouble).
        XCTAssertEqual(told, ["trouble", "closing", "reopened", "retry commits"])
        XCTAssertNotNil(driver.trouble)
    }
}
