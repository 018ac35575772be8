@testable import Advertisements
import HCI
import XCTest
import AdvertisingFixtures
import SplitMix

final class IdentityResolutionTests: XCTestCase {
    let sampleIRK = IdentityResolvingKey(bytes("ec0234a357c8ad05341010a60a397d9b"))!

    func testCoreSpecSampleVector() {
        // Core Specification Vol 3 Part H, Appendix D.7: ah(IRK, 0x708194) = 0x0dfbaa.
        XCTAssertEqual(sampleIRK.ah(0x70_8194), 0x0D_FBAA)
        XCTAssertTrue(sampleIRK.resolves(BluetoothAddress(rawValue: 0x708194_0DFBAA)))
        XCTAssertFalse(sampleIRK.resolves(BluetoothAddress(rawValue: 0x708194_0DFBAB)))
    }

    func testRejectsWrongKeyLength() {
        XCTAssertNil(IdentityResolvingKey([UInt8](repeating: 1, count: 15)))
    }

    func testGeneratedRPAResolvesOnlyWithItsKey() {
        var rng = SplitMix64(seed: 42)
        let other = IdentityResolvingKey((0 ..< 16).map { _ in UInt8.random(in: 0 ... 255, using: &rng) })!
        for _ in 0 ..< 50 {
            let address = sampleIRK.resolvablePrivateAddress(random: UInt32.random(in: 0 ... .max, using: &rng))
            XCTAssertEqual(address.randomAddressKind, .resolvablePrivate)
            XCTAssertTrue(address.isResolvablePrivate(type: .randomDevice))
            XCTAssertFalse(address.isResolvablePrivate(type: .publicDevice))
            XCTAssertTrue(sampleIRK.resolves(address))
            XCTAssertFalse(other.resolves(address))
        }
    }

    func testCacheIsBoundedAndEvictsOldestOfEachPart() {
        var cache = ResolvedAddressCache(capacity: 2, resolvedCapacity: 2)
        for raw in UInt64(1) ... 6 {
            cache.insert(raw % 2 == 0 ? .tag(Int(raw)) : .unresolved, for: BluetoothAddress(rawValue: raw))
        }
        XCTAssertEqual(cache.count, 4)
        XCTAssertEqual(cache.evictions, 2)
        XCTAssertNil(cache.lookup(BluetoothAddress(rawValue: 1)))
        XCTAssertNil(cache.lookup(BluetoothAddress(rawValue: 2)))
        XCTAssertEqual(cache.lookup(BluetoothAddress(rawValue: 3)), .unresolved)
        XCTAssertEqual(cache.lookup(BluetoothAddress(rawValue: 6)), .tag(6))
        // Re-inserting a present address updates in place and evicts nothing.
        cache.insert(.tag(9), for: BluetoothAddress(rawValue: 3))
        XCTAssertEqual(cache.lookup(BluetoothAddress(rawValue: 3)), .tag(9))
        XCTAssertEqual(cache.evictions, 2)
        cache.removeAll()
        XCTAssertEqual(cache.count, 0)
        XCTAssertNil(cache.lookup(BluetoothAddress(rawValue: 6)))
    }
}
