import XCTest
@testable import GatewayCore

/// A sample of a person already heard reads and writes only the front of their slots
/// (`PresenceEngine`, "Slot layout"): a field added or moved ahead of them would spread
/// every sample over more cache lines without any test of decisions noticing.
final class PresenceSlotLayoutTests: XCTestCase {
    typealias Tag = PresenceEngine.TagSlot
    typealias Person = PresenceEngine.PersonSlot

    private func end<Slot, Field>(_ field: WritableKeyPath<Slot, Field>) -> Int {
        MemoryLayout<Slot>.offset(of: field)! + MemoryLayout<Field>.size
    }

    func testATagsHotFieldsShareItsFirst32Bytes() {
        let hot: [Int] = [end(\Tag.lastSample), end(\Tag.address), end(\Tag.person), end(\Tag.head), end(\Tag.count),
                          end(\Tag.addressType), end(\Tag.txPower)]
        XCTAssertLessThanOrEqual(hot.max()!, 32)
        XCTAssertGreaterThanOrEqual(MemoryLayout<Tag>.offset(of: \Tag.id)!, 32, "the cold fields come after")
    }

    func testAPersonsHotFieldsShareItsFirst48BytesANearbyPersonsItsFirst32() {
        let nearby: [Int] = [end(\Person.lastSample), end(\Person.scheduledAt), end(\Person.firstTagSlot),
                             end(\Person.tagCount), end(\Person.state)]
        XCTAssertLessThanOrEqual(nearby.max()!, 32)
        let visit: [Int] = [end(\Person.visitStart), end(\Person.unconfirmedSince)]
        XCTAssertLessThanOrEqual(visit.max()!, 48)
        XCTAssertGreaterThanOrEqual(MemoryLayout<Person>.offset(of: \Person.id)!, 48, "the cold fields come after")
    }
}
