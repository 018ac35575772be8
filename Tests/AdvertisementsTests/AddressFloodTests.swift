@testable import Advertisements
import EventLoop
import HCI
import XCTest
import SplitMix

/// An address flood against a door with 500 enrolled phones (docs/identities.md, "Address
/// floods"): the AES work per second stays within the budget, and a phone that comes
/// during the flood is still matched within a second or so of its first advertisement.
final class AddressFloodTests: XCTestCase {
    static let phones = 500

    func keys(_ rng: inout SplitMix64) -> [IdentityResolvingKey] {
        (0 ..< Self.phones).map { _ in IdentityResolvingKey((0 ..< 16).map { _ in UInt8.random(in: 0 ... 255, using: &rng) })! }
    }

    func matcher(_ keys: [IdentityResolvingKey]) -> TagMatcher {
        let tags = keys.enumerated().map { index, key in
            ConfiguredTag(tagId: "phone-\(index)", personId: "p\(index)", identities: [.irk(key.bytes)])
        }
        return TagMatcher(tags: tags, resolutionBudget: RPAResolutionBudget())
    }

    /// `sightings`: how often the flood repeats each made-up address. The flood sends 1,000
    /// new addresses a second for a minute; phone 123 turns up at 30 s, advertising every
    /// 100 ms. Returns when the phone was first matched (seconds after it turned up) and
    /// the most IRK tries any second took.
    func flood(sightings: Int) -> (latency: Double?, maxTriesPerSecond: Int, matcher: TagMatcher) {
        var rng = SplitMix64(seed: UInt64(sightings))
        let keys = keys(&rng)
        var matcher = matcher(keys)
        let phoneAddress = keys[123].resolvablePrivateAddress(random: 0x12_3456)
        let empty = AdvertisementKeys(scanning: [][...])
        var latency: Double?
        var maxTries = 0
        for second in 0 ..< 60 {
            let before = matcher.counters.irkTries
            // One batch of reports per 100 ms, as a busy door's reads.
            for tenth in 0 ..< 10 {
                let now = Instant(nanoseconds: Int64(second) * 1_000_000_000 + Int64(tenth) * 100_000_000)
                matcher.refillResolutionBudget(at: now)
                for _ in 0 ..< 100 {
                    let fake = BluetoothAddress(rawValue: 0x40_0000_0000_00 | UInt64.random(in: 0 ..< (1 << 46), using: &rng))
                    for _ in 0 ..< sightings {
                        _ = matcher.matchIndex(address: fake, addressType: .randomDevice, keys: empty)
                    }
                }
                if second >= 30, latency == nil,
                   matcher.matchIndex(address: phoneAddress, addressType: .randomDevice, keys: empty) != nil {
                    latency = Double(second - 30) + Double(tenth) / 10
                }
            }
            maxTries = max(maxTries, matcher.counters.irkTries - before)
        }
        print("address flood: \(sightings) sighting(s) per address, phone matched after \(latency.map { "\($0) s" } ?? "never"),"
              + " most IRK tries in a second \(maxTries), gate \(matcher.resolutionBudget?.gate ?? 0)")
        return (latency, maxTries, matcher)
    }

    func testAFloodOfOneTimeAddressesCostsABudgetAndThePhoneIsStillMatched() throws {
        let (latency, maxTries, matcher) = flood(sightings: 1)
        XCTAssertLessThanOrEqual(maxTries, 2 * 50_000, "a second's budget, and at most one carried over")
        XCTAssertLessThanOrEqual(try XCTUnwrap(latency, "the phone was never matched"), 1.0)
        XCTAssertGreaterThan(matcher.counters.resolutionsGated + matcher.counters.resolutionsDeferred, 0, "the flood is counted")
    }

    func testAFloodThatRepeatsItsAddressesRaisesTheGateAndThePhoneIsStillMatched() throws {
        for sightings in [2, 4] {
            let (latency, maxTries, matcher) = flood(sightings: sightings)
            XCTAssertLessThanOrEqual(maxTries, 2 * 50_000, "\(sightings) sightings")
            XCTAssertLessThanOrEqual(try XCTUnwrap(latency, "\(sightings) sightings: never matched"), 1.5, "\(sightings) sightings")
            XCTAssertGreaterThan(matcher.resolutionBudget?.gate ?? 0, sightings, "the gate outgrew the flood's repeats")
        }
    }

    func testWithoutAFloodEveryPhoneIsMatchedAtItsFirstReport() {
        var rng = SplitMix64(seed: 7)
        let keys = keys(&rng)
        var matcher = matcher(keys)
        let empty = AdvertisementKeys(scanning: [][...])
        matcher.refillResolutionBudget(at: .zero)
        for (index, key) in keys.enumerated().prefix(50) {
            let address = key.resolvablePrivateAddress(random: UInt32(index) &* 7919)
            XCTAssertEqual(matcher.matchIndex(address: address, addressType: .randomDevice, keys: empty)?.tagIndex, Int32(index))
        }
        XCTAssertEqual(matcher.counters.resolutionsGated + matcher.counters.resolutionsDeferred, 0)
        XCTAssertEqual(matcher.resolutionBudget?.gate, 1)
    }

    func testResolvedPhonesStayCachedWhateverTheFloodPutsInTheCache() {
        var cache = ResolvedAddressCache(capacity: 4, resolvedCapacity: 2)
        cache.insert(.tag(1), for: BluetoothAddress(rawValue: 1))
        for raw in UInt64(100) ..< 200 { cache.insert(.unresolved, for: BluetoothAddress(rawValue: raw)) }
        XCTAssertEqual(cache.lookup(BluetoothAddress(rawValue: 1)), .tag(1), "unknown addresses push out unknown ones")
        XCTAssertEqual(cache.count, 5)
        cache.insert(.tag(2), for: BluetoothAddress(rawValue: 2))
        cache.insert(.tag(3), for: BluetoothAddress(rawValue: 3))
        XCTAssertNil(cache.lookup(BluetoothAddress(rawValue: 1)), "the oldest tag address goes when tags fill their part")
    }
}
