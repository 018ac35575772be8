import EventLoop
import XCTest
@testable import Forwarder

/// `DeliveryQueue` alone: per-person order, and memory that follows the persons with
/// something to send, not every person id the door ever saw.
final class DeliveryQueueTests: XCTestCase {
    func testEachPersonsHeadGoesInSequenceOrderAndTheNextFollowsWhenItIsDone() {
        var queue = DeliveryQueue()
        queue.sawPending(sequence: 1, personId: "a")
        queue.sawPending(sequence: 2, personId: "b")
        queue.sawPending(sequence: 3, personId: "a")
        XCTAssertEqual(queue.take(limit: 10).map(\.sequence), [1, 2], "a's second waits for its first")
        queue.finished(personId: "a", nextHead: 3)
        XCTAssertEqual(queue.take(limit: 10).map(\.sequence), [3])
    }

    func testAYearOfDistinctPersonsKeepsTheQueueSmall() {
        var queue = DeliveryQueue()
        // 100,000 persons, each one event, delivered; one person held in a retry wait
        // and one in flight throughout.
        queue.sawPending(sequence: 1, personId: "held")
        queue.sawPending(sequence: 2, personId: "flying")
        _ = queue.take(limit: 2)
        queue.retry(personId: "held", at: Instant(nanoseconds: 1_000_000_000_000))
        for n in 0 ..< 100_000 {
            let sequence = Int64(n + 3)
            queue.sawPending(sequence: sequence, personId: "p\(n)")
            XCTAssertEqual(queue.take(limit: 1).first?.sequence, sequence)
            queue.finished(personId: "p\(n)", nextHead: nil)
        }
        XCTAssertLessThanOrEqual(queue.personCount, 2 * DeliveryQueue.compactionFloor + 2)
        // What waited is still there.
        queue.releaseHolds(at: Instant(nanoseconds: 1_000_000_000_000))
        XCTAssertEqual(queue.take(limit: 10).map(\.sequence), [1], "the held person's head is offered again")
        queue.finished(personId: "flying", nextHead: 7)
        XCTAssertEqual(queue.take(limit: 10).map(\.sequence), [7])
    }
}
