import EventLoop
import XCTest
@testable import Store

/// The store's health on a virtual clock: one change per change of state, retries
/// backing off from 1 s to 30 s, reset by a success.
final class StoreHealthTests: XCTestCase {
    private func at(_ seconds: Int64) -> Instant { Instant(nanoseconds: seconds * 1_000_000_000) }

    func testHealthyStoreReportsNothing() {
        var health = StoreHealth()
        XCTAssertNil(health.succeeded(at: at(1)))
        XCTAssertTrue(health.isHealthy)
        XCTAssertNil(health.nextRetry)
    }

    func testEachKindOfTroubleIsReportedOnceThenRecovery() {
        var health = StoreHealth()
        XCTAssertEqual(health.failed(.readOnly, at: at(10)), .init(trouble: .readOnly, previous: nil, lasted: nil))
        // More events failing the same way: no new report.
        for second in Int64(11) ... 20 { XCTAssertNil(health.failed(.readOnly, at: at(second))) }
        XCTAssertEqual(health.trouble, .readOnly)
        XCTAssertEqual(health.failed(.full, at: at(21)), .init(trouble: .full, previous: .readOnly, lasted: nil))
        XCTAssertEqual(health.succeeded(at: at(70)), .init(trouble: nil, previous: .full, lasted: .seconds(60)))
        XCTAssertNil(health.succeeded(at: at(71)))
        XCTAssertTrue(health.isHealthy)
    }

    func testACorruptDatabaseIsNotRecoveredByAnotherWriteOnlyByItsExamination() {
        var health = StoreHealth()
        XCTAssertEqual(health.failed(.corrupt, at: at(10)), .init(trouble: .corrupt, previous: nil, lasted: nil))
        // A write away from the damaged pages succeeds on the same file: still corrupt.
        XCTAssertNil(health.succeeded(at: at(11)))
        XCTAssertEqual(health.trouble, .corrupt)
        XCTAssertNil(health.failed(.corrupt, at: at(12)), "the same trouble, not reported again")
        health.reopened()
        XCTAssertEqual(health.succeeded(at: at(13)), .init(trouble: nil, previous: .corrupt, lasted: .seconds(3)))
        // Other trouble clears with any success, as before.
        _ = health.failed(.io, at: at(20))
        XCTAssertNotNil(health.succeeded(at: at(21)))
    }

    func testRetriesBackOffFromOneToThirtySeconds() {
        var health = StoreHealth()
        _ = health.failed(.locked, at: at(100))
        var waits: [Int64] = []
        var now = at(100)
        while let next = health.nextRetry, waits.count < 8 {
            waits.append((next.nanoseconds - now.nanoseconds) / 1_000_000_000)
            now = next
            health.retrying(at: now)
            _ = health.failed(.locked, at: now)
        }
        XCTAssertEqual(waits, [1, 2, 4, 8, 16, 30, 30, 30])
    }

    func testASuccessResetsTheBackoff() {
        var health = StoreHealth()
        _ = health.failed(.io, at: at(0))
        health.retrying(at: at(1))
        health.retrying(at: at(3))
        XCTAssertEqual(health.nextRetry, at(7))
        _ = health.succeeded(at: at(7))
        XCTAssertNil(health.nextRetry)
        _ = health.failed(.io, at: at(50))
        XCTAssertEqual(health.nextRetry, at(51))
    }
}
