@testable import Advertisements
import SplitMix
import XCTest

final class FlatHashTableTests: XCTestCase {
    /// A key whose hash the test chooses, to crowd keys into chosen slots whatever the seed.
    struct CrowdedKey: FlatHashKey, Hashable {
        var id: Int
        var hashValueForTable: UInt64
        func hash(seed _: UInt64) -> UInt64 { hashValueForTable }
        static var filler: CrowdedKey { CrowdedKey(id: -1, hashValueForTable: 0) }
    }

    func testMatchesADictionaryForAddresses() {
        var rng = SplitMix64(seed: 1)
        let keys = (0 ..< 300).map { _ in UInt64.random(in: 0 ... UInt64.max, using: &rng) }
        checkAgainstDictionary(keys: keys, operations: 30000, rng: &rng)
    }

    /// Keys that differ only above bit 40: any mixer that left the slot to the low bits
    /// would put them all in one slot.
    func testMatchesADictionaryForKeysEqualInTheirLowBits() {
        var rng = SplitMix64(seed: 2)
        let keys = (0 ..< 200).map { UInt64($0) << 40 | 0xAB_CDEF }
        checkAgainstDictionary(keys: keys, operations: 20000, rng: &rng)
    }

    func testMatchesADictionaryForIBeaconAndEddystoneKeys() {
        var rng = SplitMix64(seed: 3)
        let uuid = UUID128(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
        // A fleet shares its UUID (or namespace): the keys differ in a few bits only.
        let beacons = (0 ..< 150).map { IBeaconKey(uuid: uuid, major: UInt16($0 % 3), minor: UInt16($0)) }
            + (0 ..< 50).map { _ in
                IBeaconKey(uuid: UUID128(high: rng.next(), low: rng.next()), major: .random(in: 0 ... .max, using: &rng),
                           minor: .random(in: 0 ... .max, using: &rng))
            }
        checkAgainstDictionary(keys: beacons, operations: 20000, rng: &rng)
        let uids = (0 ..< 150).map { EddystoneUID(namespaceHigh: 0xEDD1, namespaceLow: 0xEBEA_C04E_5DEF_A017, instance: UInt64($0)) }
            + (0 ..< 50).map { _ in
                EddystoneUID(namespaceHigh: .random(in: 0 ... .max, using: &rng), namespaceLow: rng.next(),
                             instance: rng.next() >> 16)
            }
        checkAgainstDictionary(keys: uids, operations: 20000, rng: &rng)
    }

    /// Every key's home is one of the last two slots or the first, at any table size, so
    /// runs wrap around the end of the array and removals shift entries back across it.
    func testMatchesADictionaryWhenRunsWrapAroundTheEnd() {
        var rng = SplitMix64(seed: 4)
        let homes: [UInt64] = [.max, .max - 1, 0]
        let keys = (0 ..< 12).map { CrowdedKey(id: $0, hashValueForTable: homes[$0 % 3]) }
        checkAgainstDictionary(keys: keys, operations: 20000, rng: &rng)
    }

    func testRemovalShiftsTheWrappedRunBack() {
        // 8 slots: a at 7 (its home), b (home 7) wrapped to 0, c (home 0) pushed to 1.
        var table = FlatHashTable<CrowdedKey>(minimumCapacity: 4)
        let a = CrowdedKey(id: 1, hashValueForTable: 7)
        let b = CrowdedKey(id: 2, hashValueForTable: 7)
        let c = CrowdedKey(id: 3, hashValueForTable: 0)
        table.updateValue(10, forKey: a)
        table.updateValue(20, forKey: b)
        table.updateValue(30, forKey: c)
        XCTAssertEqual(table.removeValue(forKey: a), 10)
        // Without the shift, b's probe would stop at the hole in slot 7.
        XCTAssertNil(table[a])
        XCTAssertEqual(table[b], 20)
        XCTAssertEqual(table[c], 30)
        XCTAssertEqual(table.removeValue(forKey: b), 20)
        XCTAssertEqual(table[c], 30)
        XCTAssertEqual(table.count, 1)
    }

    func testAbsentKeys() {
        var table = FlatHashTable<UInt64>()
        XCTAssertTrue(table.isEmpty)
        XCTAssertNil(table[42])
        XCTAssertNil(table.removeValue(forKey: 42))
        for key in UInt64(0) ..< 100 { table.updateValue(Int32(key), forKey: key * 2) }
        for key in UInt64(0) ..< 100 {
            XCTAssertNil(table[key * 2 + 1])
            XCTAssertNil(table.removeValue(forKey: key * 2 + 1))
        }
        XCTAssertEqual(table.count, 100)
        XCTAssertLessThanOrEqual(table.count, table.capacity)
    }

    func testRemoveAllKeepsCapacityAndEmpties() {
        var table = FlatHashTable<UInt64>(minimumCapacity: 64)
        let capacity = table.capacity
        XCTAssertGreaterThanOrEqual(capacity, 64)
        for key in UInt64(1) ... 64 { table.updateValue(1, forKey: key) }
        XCTAssertEqual(table.capacity, capacity, "filled to its capacity without growing")
        table.removeAll()
        XCTAssertEqual(table.count, 0)
        XCTAssertEqual(table.capacity, capacity)
        XCTAssertNil(table[1])
        table.updateValue(5, forKey: 1)
        XCTAssertEqual(table[1], 5)
    }

    func testCopiesAreIndependent() {
        var table = FlatHashTable<UInt64>()
        table.updateValue(1, forKey: 7)
        var copy = table
        copy.updateValue(2, forKey: 7)
        copy.removeValue(forKey: 7)
        table.updateValue(3, forKey: 8)
        XCTAssertEqual(table[7], 1)
        XCTAssertEqual(table[8], 3)
        XCTAssertNil(copy[7])
        XCTAssertNil(copy[8])
    }

    /// The seed is drawn per table: without it an attacker could compute addresses that
    /// share a slot in every gateway's resolution cache.
    func testEachTableDrawsItsOwnSeed() {
        let seeds = (0 ..< 4).map { _ in FlatHashTable<UInt64>().seed }
        XCTAssertEqual(Set(seeds).count, 4)
        XCTAssertNotEqual(UInt64(42).hash(seed: seeds[0]), UInt64(42).hash(seed: seeds[1]))
    }

    /// Random inserts, updates, removals and lookups, on the table and on a `Dictionary`:
    /// every answer, and after each step the count, must agree; every few steps every
    /// key is looked up.
    private func checkAgainstDictionary<Key: FlatHashKey & Hashable>(
        keys: [Key], operations: Int, rng: inout SplitMix64, file: StaticString = #filePath, line: UInt = #line
    ) {
        // One divergence spoils every later step: the first says what went wrong.
        continueAfterFailure = false
        var table = FlatHashTable<Key>()
        var model: [Key: Int32] = [:]
        for step in 0 ..< operations {
            let key = keys.randomElement(using: &rng)!
            switch Int.random(in: 0 ..< 10, using: &rng) {
            case 0 ..< 4:
                let value = Int32.random(in: -1000 ... 1000, using: &rng)
                XCTAssertEqual(table.updateValue(value, forKey: key), model.updateValue(value, forKey: key), file: file, line: line)
            case 4 ..< 7:
                XCTAssertEqual(table.removeValue(forKey: key), model.removeValue(forKey: key), file: file, line: line)
            case 7:
                if Int.random(in: 0 ..< 500, using: &rng) == 0 {
                    table.removeAll()
                    model.removeAll()
                }
            default:
                XCTAssertEqual(table[key], model[key], file: file, line: line)
            }
            XCTAssertEqual(table.count, model.count, file: file, line: line)
            XCTAssertLessThanOrEqual(table.count, table.capacity, file: file, line: line)
            if step % 97 == 0 {
                for key in keys where table[key] != model[key] {
                    XCTFail("step \(step): \(key) holds \(String(describing: table[key])), not \(String(describing: model[key]))",
                            file: file, line: line)
                }
            }
        }
    }
}
