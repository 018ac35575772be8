@testable import Advertisements
import HCI
import XCTest
import AdvertisingFixtures
import SplitMix

final class TagMatcherTests: XCTestCase {
    let irkBytes = bytes("ec0234a357c8ad05341010a60a397d9b")
    let staticAddress = BluetoothAddress("C0:11:22:33:44:55")!
    let noiseAddress = BluetoothAddress("D4:00:00:00:00:01")!

    func tags() throws -> [ConfiguredTag] {
        [
            ConfiguredTag(tagId: "tag-1001", personId: "u_1001", identities: [
                try TagIdentity.parse(key: "ibeacon", value: "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1"),
                .address(staticAddress),
            ]),
            ConfiguredTag(tagId: "tag-1002", personId: "u_1002", identities: [
                try TagIdentity.parse(key: "eddystone_uid", value: "edd1ebeac04e5defa017:0123456789ab"),
            ]),
            ConfiguredTag(tagId: "phone-1003", personId: "u_1003", identities: [.irk(irkBytes)]),
        ]
    }

    func testIBeaconMatch() throws {
        var matcher = TagMatcher(tags: try tags())
        let match = matcher.match(address: noiseAddress, addressType: .randomDevice, data: bytes(Frames.iBeacon))
        XCTAssertEqual(match, TagMatch(tagIndex: 0, tagId: "tag-1001", personId: "u_1001", matchedBy: .iBeacon))
        // Same UUID, other minor: someone else's tag.
        var other = bytes(Frames.iBeacon)
        other[other.count - 2] = 2
        XCTAssertNil(matcher.match(address: noiseAddress, addressType: .randomDevice, data: other))
    }

    func testEddystoneMatch() throws {
        var matcher = TagMatcher(tags: try tags())
        XCTAssertEqual(matcher.match(address: noiseAddress, addressType: .randomDevice, data: bytes(Frames.eddystoneUID))?.tagId, "tag-1002")
        XCTAssertNil(matcher.match(address: noiseAddress, addressType: .randomDevice, data: bytes(Frames.eddystoneURL)))
    }

    func testAddressMatchOnlyForStableAddresses() throws {
        var matcher = TagMatcher(tags: try tags())
        XCTAssertEqual(matcher.match(address: staticAddress, addressType: .randomDevice, data: [])?.matchedBy, .address)
        XCTAssertEqual(matcher.match(address: staticAddress, addressType: .randomIdentity, data: [])?.matchedBy, .address)
        let publicTag = ConfiguredTag(tagId: "pub", personId: "p", identities: [.address(BluetoothAddress("00:1A:7D:DA:71:13")!)])
        var publicMatcher = TagMatcher(tags: [publicTag])
        XCTAssertEqual(publicMatcher.match(address: BluetoothAddress("00:1A:7D:DA:71:13")!, addressType: .publicDevice, data: [])?.tagId, "pub")
        // The same 48 bits as a non-resolvable private random address are not that device.
        XCTAssertNil(publicMatcher.match(address: BluetoothAddress("00:1A:7D:DA:71:13")!, addressType: .randomDevice, data: []))
    }

    func testPrecedenceAddressBeforeIBeaconBeforeEddystone() throws {
        // A report carrying tag-1002's Eddystone-UID, tag-3's iBeacon, from tag-1001's address.
        let crowded = [
            ConfiguredTag(tagId: "by-address", personId: "a", identities: [.address(staticAddress)]),
            ConfiguredTag(tagId: "by-eddystone", personId: "b", identities: [try TagIdentity.parse(key: "eddystone_uid", value: "edd1ebeac04e5defa017:0123456789ab")]),
            ConfiguredTag(tagId: "by-ibeacon", personId: "c", identities: [try TagIdentity.parse(key: "ibeacon", value: "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1")]),
        ]
        var matcher = TagMatcher(tags: crowded)
        let data = bytes(Frames.iBeacon) + bytes(Frames.eddystoneUID).dropFirst(7)
        XCTAssertEqual(matcher.match(address: staticAddress, addressType: .randomDevice, data: data)?.tagId, "by-address")
        XCTAssertEqual(matcher.match(address: noiseAddress, addressType: .randomDevice, data: data)?.tagId, "by-ibeacon")
        XCTAssertEqual(matcher.match(address: noiseAddress, addressType: .randomDevice, data: bytes(Frames.eddystoneUID))?.tagId, "by-eddystone")
    }

    func testIRKMatchUsesCacheAndOnlyRPAs() throws {
        var matcher = TagMatcher(tags: try tags())
        let key = IdentityResolvingKey(irkBytes)!
        let rpa = key.resolvablePrivateAddress(random: 0x12_3456)
        let match = matcher.match(address: rpa, addressType: .randomDevice, data: [])
        XCTAssertEqual(match?.tagId, "phone-1003")
        XCTAssertEqual(match?.matchedBy, .irk)
        XCTAssertEqual(matcher.counters.resolutionCacheMisses, 1)
        XCTAssertEqual(matcher.match(address: rpa, addressType: .randomDevice, data: [])?.tagId, "phone-1003")
        XCTAssertEqual(matcher.counters.resolutionCacheHits, 1)

        // An RPA of another key: resolved once to "none", then answered from the cache.
        let stranger = IdentityResolvingKey([UInt8](repeating: 7, count: 16))!.resolvablePrivateAddress(random: 99)
        XCTAssertNil(matcher.match(address: stranger, addressType: .randomDevice, data: []))
        XCTAssertNil(matcher.match(address: stranger, addressType: .randomDevice, data: []))
        XCTAssertEqual(matcher.counters.resolutionCacheMisses, 2)
        XCTAssertEqual(matcher.counters.resolutionCacheHits, 2)

        // Public and static addresses never reach the IRK path, even with RPA-like bits.
        XCTAssertNil(matcher.match(address: rpa, addressType: .publicDevice, data: []))
        XCTAssertNil(matcher.match(address: staticAddress.with(rawValue: 0xC0_0000_000001), addressType: .randomDevice, data: []))
        XCTAssertEqual(matcher.counters.resolutionCacheMisses, 2)
        XCTAssertEqual(matcher.counters.resolutionCacheHits, 2)
        XCTAssertEqual(matcher.cachedResolutions, 2)
    }

    func testReconfigureInvalidatesResolutionsWhenIRKsChange() throws {
        var matcher = TagMatcher(tags: try tags())
        let rpa = IdentityResolvingKey(irkBytes)!.resolvablePrivateAddress(random: 5)
        XCTAssertNotNil(matcher.match(address: rpa, addressType: .randomDevice, data: []))
        matcher.reconfigure(tags: try tags())
        XCTAssertEqual(matcher.cachedResolutions, 1, "same IRKs: cache kept")
        matcher.reconfigure(tags: Array(try tags().prefix(2)))
        XCTAssertEqual(matcher.cachedResolutions, 0)
        XCTAssertNil(matcher.match(address: rpa, addressType: .randomDevice, data: []))
    }

    func testUnknownDevicesAndMalformedDataCounted() throws {
        var matcher = TagMatcher(tags: try tags())
        XCTAssertNil(matcher.match(address: noiseAddress, addressType: .publicDevice, data: bytes(Frames.appleContinuity)))
        XCTAssertNil(matcher.match(address: noiseAddress, addressType: .publicDevice, data: bytes("020106 05ff4c00")))
        XCTAssertNil(matcher.match(address: noiseAddress, addressType: .publicDevice, data: bytes("020106 0bff4c000215e2c56db5dffb")))
        XCTAssertEqual(matcher.counters.reports, 3)
        XCTAssertEqual(matcher.counters.matched, 0)
        XCTAssertEqual(matcher.counters.malformed.malformedReports, 2)
        XCTAssertEqual(matcher.counters.malformed.lengthPastEnd, 1)
        XCTAssertEqual(matcher.counters.malformed.truncatedIBeacon, 1)
    }

    /// The hot path's form answers as `match` and counts the same, for every kind of identity.
    func testMatchIndexAgreesWithMatch() throws {
        var byIndex = TagMatcher(tags: try tags())
        var byTag = TagMatcher(tags: try tags())
        let rpa = IdentityResolvingKey(irkBytes)!.resolvablePrivateAddress(random: 77)
        let reports: [(BluetoothAddress, AddressType, [UInt8])] = [
            (noiseAddress, .randomDevice, bytes(Frames.iBeacon)),
            (noiseAddress, .randomDevice, bytes(Frames.eddystoneUID)),
            (staticAddress, .randomDevice, []),
            (rpa, .randomDevice, []),
            (rpa, .randomDevice, []),
            (noiseAddress, .publicDevice, bytes("020106 05ff4c00")),
        ]
        for (address, type, data) in reports {
            let keys = AdvertisementKeys(scanning: data[...])
            let found = byIndex.matchIndex(address: address, addressType: type, keys: keys)
            let match = byTag.match(address: address, addressType: type, keys: keys)
            XCTAssertEqual(found.map { Int($0.tagIndex) }, match?.tagIndex)
            XCTAssertEqual(found?.matchedBy, match?.matchedBy)
        }
        XCTAssertEqual(byIndex.counters, byTag.counters)
        XCTAssertEqual(byIndex.counters.matched, 5)
        XCTAssertEqual(byIndex.counters.resolutionCacheHits, 1)
    }

    func testTupleInitialiser() {
        var matcher = TagMatcher(tags: [(tagId: "t", personId: "p", identities: [.address(staticAddress)])])
        XCTAssertEqual(matcher.match(address: staticAddress, addressType: .randomDevice, data: [])?.personId, "p")
    }

    func testDuplicateIdentityKeepsFirstTagAndReportsConflict() throws {
        let shared = TagIdentity.address(staticAddress)
        var matcher = TagMatcher(tags: [
            ConfiguredTag(tagId: "first", personId: "p1", identities: [shared]),
            ConfiguredTag(tagId: "second", personId: "p2", identities: [shared]),
        ])
        XCTAssertEqual(matcher.match(address: staticAddress, addressType: .randomDevice, data: [])?.tagId, "first")
        XCTAssertEqual(matcher.conflicts, [TagMatcher.Conflict(identity: shared, keptTagId: "first", ignoredTagId: "second")])
    }

    func testFuzzedReportsNeverCrashTheMatcher() throws {
        var matcher = TagMatcher(tags: try tags())
        var rng = SplitMix64(seed: 7)
        for _ in 0 ..< 20_000 {
            let data = (0 ..< Int.random(in: 0 ... 40, using: &rng)).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
            let address = BluetoothAddress(rawValue: UInt64.random(in: 0 ... .max, using: &rng))
            _ = matcher.match(address: address, addressType: AddressType(rawValue: UInt8.random(in: 0 ... 3, using: &rng)), data: data)
        }
        XCTAssertEqual(matcher.counters.reports, 20_000)
        XCTAssertLessThanOrEqual(matcher.cachedResolutions, 4096)
    }
}

private extension BluetoothAddress {
    func with(rawValue: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: rawValue) }
}
