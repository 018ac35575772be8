import Advertisements
import EventLoop
import HCI
import XCTest
@testable import Presentation
import AdvertisingFixtures
import SplitMix

/// Drives the per-report path (keys → match → statistics) with a realistic mix: 90 %
/// reports from noise devices, 10 % from configured tags. It asserts what must hold at
/// any speed (every tag report matched, no noise matched, bounded tables) and prints the
/// cost per report; it asserts no timing. Run in release for meaningful numbers:
/// `swift test -c release -Xswiftc -enable-testing --filter HotPathThroughputTests`.
final class HotPathThroughputTests: XCTestCase {
    struct Report {
        var address: BluetoothAddress
        var type: AddressType
        var rssi: Int8
        var data: ArraySlice<UInt8>
        var expectedTag: Int?
    }

    func makeWorkload(count: Int) throws -> (tags: [ConfiguredTag], reports: [Report]) {
        var rng = SplitMix64(seed: 2026)
        var tags: [ConfiguredTag] = []
        var tagFrames: [(BluetoothAddress, AddressType, [UInt8])] = []
        let irk = bytes("ec0234a357c8ad05341010a60a397d9b")
        for i in 0 ..< 200 {
            let identity: TagIdentity
            var frame: [UInt8]
            var address = BluetoothAddress(rawValue: 0xC000_0000_0000 | UInt64(i)) // static random
            var type = AddressType.randomDevice
            switch i % 10 {
            case 0 ..< 6:
                identity = try TagIdentity.parse(key: "ibeacon", value: "e2c56db5-dffb-48d2-b060-d0f5a71096e0:\(i):1")
                frame = bytes(Frames.iBeacon)
                frame[frame.count - 5] = UInt8(i >> 8)
                frame[frame.count - 4] = UInt8(i & 0xFF)
                address = BluetoothAddress(rawValue: 0x4000_0000_0000 | UInt64(i)) // rotating: not the key
                type = .randomDevice
            case 6 ..< 8:
                identity = .eddystoneUID(namespace: bytes("edd1ebeac04e5defa017"), instance: bytes("0123456789") + [UInt8(i)])
                frame = bytes(Frames.eddystoneUID)
                frame[frame.count - 3] = UInt8(i)
            case 8:
                identity = .address(address)
                frame = bytes(Frames.batteryService)
            default:
                var key = irk
                key[0] = UInt8(i)
                identity = .irk(key)
                address = IdentityResolvingKey(key)!.resolvablePrivateAddress(random: UInt32(i))
                frame = bytes(Frames.appleContinuity)
            }
            tags.append(ConfiguredTag(tagId: "tag-\(i)", personId: "p-\(i)", identities: [identity]))
            tagFrames.append((address, type, frame))
        }
        let noiseFrames = [Frames.appleContinuity, Frames.microsoftCDP, Frames.microsoftSwiftPair, Frames.nordicUART,
                           Frames.eddystoneTLM, Frames.eddystoneURL, Frames.iBeacon].map { bytes($0) }
        var noise: [(BluetoothAddress, AddressType, [UInt8])] = []
        for i in 0 ..< 3000 {
            var frame = noiseFrames[i % noiseFrames.count]
            if i % noiseFrames.count == noiseFrames.count - 1 { frame[frame.count - 2] = 0xEE } // unknown iBeacon
            let raw = UInt64.random(in: 0 ... 0xFFFF_FFFF_FFFF, using: &rng)
            noise.append((BluetoothAddress(rawValue: raw), i % 3 == 0 ? .publicDevice : .randomDevice, frame))
        }
        var reports: [Report] = []
        reports.reserveCapacity(count)
        for n in 0 ..< count {
            let rssi = Int8.random(in: -95 ... -40, using: &rng)
            if n % 10 == 0 {
                let i = Int.random(in: 0 ..< tagFrames.count, using: &rng)
                reports.append(Report(address: tagFrames[i].0, type: tagFrames[i].1, rssi: rssi, data: tagFrames[i].2[...], expectedTag: i))
            } else {
                let d = noise[Int.random(in: 0 ..< noise.count, using: &rng)]
                reports.append(Report(address: d.0, type: d.1, rssi: rssi, data: d.2[...], expectedTag: nil))
            }
        }
        return (tags, reports)
    }

    func testMatchAndStatisticsOverMixedTraffic() throws {
        #if DEBUG
        let count = 200_000 // unoptimised builds are ~20x slower; keep `swift test` quick
        #else
        let count = 1_000_000
        #endif
        let (tags, reports) = try makeWorkload(count: count)
        var matcher = TagMatcher(tags: tags)
        var table = AdvertiserTable()
        var wrong = 0
        let clock = SystemClock()
        let start = clock.now
        for (n, report) in reports.enumerated() {
            let keys = AdvertisementKeys(scanning: report.data)
            let match = matcher.match(address: report.address, addressType: report.type, keys: keys)
            if match?.tagIndex != report.expectedTag { wrong += 1 }
            table.record(address: report.address, addressType: report.type, rssi: report.rssi, connectable: true,
                         data: report.data, keys: keys, match: match, at: Instant(nanoseconds: Int64(n) * 1000))
        }
        let elapsed = clock.now - start
        XCTAssertEqual(wrong, 0)
        XCTAssertEqual(matcher.counters.matched, reports.count / 10)
        XCTAssertLessThanOrEqual(table.count, table.capacity)
        print("hot path: \(elapsed.secondsDouble * 1e9 / Double(reports.count)) ns/report over \(reports.count) reports, \(table.count) advertisers")
    }
}
