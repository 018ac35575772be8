import XCTest
@testable import Advertisements
import AdvertisingFixtures
import SplitMix

final class AdvertisingDataTests: XCTestCase {
    func testIBeaconFrame() throws {
        let summary = AdvertisementSummary(parsing: bytes(Frames.iBeacon))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.flags, 0x1A)
        XCTAssertEqual(summary.manufacturerData.map(\.company), [.apple])
        let beacon = try XCTUnwrap(summary.iBeacon)
        XCTAssertEqual(beacon.uuid.description, "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        XCTAssertEqual(beacon.major, 100)
        XCTAssertEqual(beacon.minor, 1)
        XCTAssertEqual(beacon.measuredPower, -59)
        XCTAssertEqual(beacon.description, "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1")

        let keys = AdvertisementKeys(scanning: bytes(Frames.iBeacon))
        XCTAssertEqual(keys.iBeacon, beacon)
        XCTAssertNil(keys.eddystoneUID)
    }

    func testEddystoneUID() throws {
        let summary = AdvertisementSummary(parsing: bytes(Frames.eddystoneUID))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.serviceUUIDs, [.eddystone])
        guard case let .uid(uid, txPower)? = summary.eddystone.first else { return XCTFail("\(summary.eddystone)") }
        XCTAssertEqual(uid.description, "edd1ebeac04e5defa017:0123456789ab")
        XCTAssertEqual(txPower, -24)
        XCTAssertEqual(uid, EddystoneUID(namespace: bytes("edd1ebeac04e5defa017"), instance: bytes("0123456789ab")))

        let keys = AdvertisementKeys(scanning: bytes(Frames.eddystoneUID))
        XCTAssertEqual(keys.eddystoneUID, uid)
        XCTAssertEqual(keys.eddystoneTxPower, -24)
        XCTAssertEqual(summary.identity.eddystoneUID, uid)
    }

    func testEddystoneURL() {
        let summary = AdvertisementSummary(parsing: bytes(Frames.eddystoneURL))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.eddystone, [.url("https://www.google.com/", txPower: -21)])
        XCTAssertNil(AdvertisementKeys(scanning: bytes(Frames.eddystoneURL)).eddystoneUID)
    }

    func testEddystoneTLM() throws {
        let summary = AdvertisementSummary(parsing: bytes(Frames.eddystoneTLM))
        XCTAssertEqual(summary.malformations, [])
        guard case let .tlm(tlm)? = summary.eddystone.first else { return XCTFail("\(summary.eddystone)") }
        XCTAssertEqual(tlm.batteryMillivolts, 3000)
        XCTAssertEqual(tlm.temperatureCelsius, 23.0)
        XCTAssertEqual(tlm.advertisementCount, 256)
        XCTAssertEqual(tlm.uptimeDeciseconds, 100)
    }

    func testEddystoneTLMTemperatureNotSupportedAndEncrypted() {
        let unsupported = AdvertisementSummary(parsing: bytes("1116aafe2000 0000 8000 00000001 00000002"))
        guard case let .tlm(tlm)? = unsupported.eddystone.first else { return XCTFail() }
        XCTAssertNil(tlm.temperatureCelsius)
        let encrypted = AdvertisementSummary(parsing: bytes("0516aafe2001"))
        XCTAssertEqual(encrypted.eddystone, [.encryptedTLM])
    }

    func testAppleContinuityIsNotIBeacon() {
        let summary = AdvertisementSummary(parsing: bytes(Frames.appleContinuity))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertNil(summary.iBeacon)
        XCTAssertEqual(summary.txPowerLevel, 12)
        XCTAssertEqual(summary.manufacturerData, [.init(company: .apple, data: bytes("100503180c4c38"))])
        XCTAssertEqual(summary.identity.manufacturer, .apple)
        let keys = AdvertisementKeys(scanning: bytes(Frames.appleContinuity))
        XCTAssertNil(keys.iBeacon)
        XCTAssertEqual(keys.txPowerLevel, 12)
        XCTAssertEqual(keys.malformations, [])
    }

    func testMicrosoftBeacons() {
        let swiftPair = AdvertisementSummary(parsing: bytes(Frames.microsoftSwiftPair))
        XCTAssertEqual(swiftPair.malformations, [])
        XCTAssertEqual(swiftPair.manufacturerData.first?.company, .microsoft)
        XCTAssertEqual(swiftPair.manufacturerData.first?.data, bytes("0300804d6f757365"))
        let cdp = AdvertisementSummary(parsing: bytes(Frames.microsoftCDP))
        XCTAssertEqual(cdp.malformations, [])
        XCTAssertEqual(cdp.manufacturerData.first?.company, CompanyIdentifier(rawValue: 0x0006))
        XCTAssertEqual(cdp.manufacturerData.first?.data.count, 27)
        XCTAssertNil(cdp.flags)
    }

    func testNameAnd128BitUUIDList() {
        let summary = AdvertisementSummary(parsing: bytes(Frames.nordicUART))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.serviceUUIDs.map(\.description), ["6e400001-b5a3-f393-e0a9-e50e24dcca9e"])
        XCTAssertEqual(summary.localName, "Nordic")
        XCTAssertTrue(summary.localNameIsComplete)
    }

    func test16BitUUIDListServiceDataAndShortenedName() {
        let summary = AdvertisementSummary(parsing: bytes(Frames.batteryService))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.serviceUUIDs, [.uuid16(0x180F), .uuid16(0x180A)])
        XCTAssertEqual(summary.serviceUUIDs.map(\.description), ["180f", "180a"])
        XCTAssertEqual(summary.serviceData, [.init(uuid: .uuid16(0x180F), data: [0x5A])])
        XCTAssertEqual(summary.localName, "Tag1")
        XCTAssertFalse(summary.localNameIsComplete)
        XCTAssertEqual(BluetoothUUID.uuid16(0x180F).uuid128.description, "0000180f-0000-1000-8000-00805f9b34fb")
    }

    func testServiceData32And128AndAppearance() {
        let summary = AdvertisementSummary(parsing: bytes("0720 78563412 aabb 1321 9ecadc240ee5a9e093f3a3b50100406e 01 02 031941 03"))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.serviceData.map(\.uuid.description), ["12345678", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"])
        XCTAssertEqual(summary.serviceData.map(\.data), [[0xAA, 0xBB], [0x01, 0x02]])
        XCTAssertEqual(summary.appearance, 0x0341)
    }

    func testInvalidUTF8NameIsTolerated() {
        let summary = AdvertisementSummary(parsing: bytes("0609 41ff fe42 00"))
        XCTAssertEqual(summary.malformations, [])
        XCTAssertEqual(summary.localName, "A\u{FFFD}\u{FFFD}B")
    }

    func testZeroLengthEndsDataWithoutMalformation() {
        let summary = AdvertisementSummary(parsing: bytes("020106 00 0303aafe"))
        XCTAssertEqual(summary.flags, 0x06)
        XCTAssertEqual(summary.serviceUUIDs, [])
        XCTAssertEqual(summary.malformations, [])
        // Legacy data zero-padded to 31 bytes.
        let padded = bytes(Frames.iBeacon).prefix(3) + [UInt8](repeating: 0, count: 28)
        XCTAssertEqual(AdvertisementSummary(parsing: Array(padded)).malformations, [])
    }

    func testLengthPastEndKeepsWhatWasValid() {
        let summary = AdvertisementSummary(parsing: bytes("020106 0303aafe 05ff4c00"))
        XCTAssertEqual(summary.flags, 0x06)
        XCTAssertEqual(summary.serviceUUIDs, [.eddystone])
        XCTAssertEqual(summary.manufacturerData, [])
        XCTAssertEqual(summary.malformations, .lengthPastEnd)
        XCTAssertEqual(AdvertisementKeys(scanning: bytes("020106 0303aafe 05ff4c00")).malformations, .lengthPastEnd)
    }

    func testTruncatedIBeaconAndEddystone() {
        let iBeacon = bytes("020106 0bff4c000215e2c56db5dffb")
        XCTAssertNil(AdvertisementSummary(parsing: iBeacon).iBeacon)
        XCTAssertEqual(AdvertisementSummary(parsing: iBeacon).malformations, .truncatedIBeacon)
        XCTAssertEqual(AdvertisementKeys(scanning: iBeacon).malformations, .truncatedIBeacon)

        let uid = bytes("0c16aafe00e8edd1ebeac04e5d")
        XCTAssertEqual(AdvertisementSummary(parsing: uid).malformations, .truncatedEddystone)
        XCTAssertEqual(AdvertisementKeys(scanning: uid).malformations, .truncatedEddystone)
        XCTAssertNil(AdvertisementKeys(scanning: uid).eddystoneUID)
    }

    func testInvalidFieldLengths() {
        // 3-byte 16-bit UUID list, 2-byte TX power, 1-byte manufacturer data.
        for frame in ["0403aabbcc", "030a0102", "02ff4c", "010a", "0219aa"] {
            XCTAssertEqual(AdvertisementSummary(parsing: bytes(frame)).malformations, .invalidFieldLength, frame)
            XCTAssertEqual(AdvertisementKeys(scanning: bytes(frame)).malformations, .invalidFieldLength, frame)
        }
    }

    func testCountersCountEachKind() {
        var counters = AdvertisingDataCounters()
        counters.record([])
        counters.record(.lengthPastEnd)
        counters.record([.truncatedIBeacon, .invalidFieldLength])
        XCTAssertEqual(counters.malformedReports, 2)
        XCTAssertEqual(counters.lengthPastEnd, 1)
        XCTAssertEqual(counters.truncatedIBeacon, 1)
        XCTAssertEqual(counters.invalidFieldLength, 1)
        XCTAssertEqual(counters.truncatedEddystone, 0)
    }

    func testIteratorOnSliceWithOffsetIndices() {
        let buffer = [0xEE, 0xEE] + bytes(Frames.nordicUART) + [0xEE]
        let slice = buffer[2 ..< buffer.count - 1]
        let types = AdvertisingData(slice).map(\.type)
        XCTAssertEqual(types, [.flags, .completeServiceUUIDs128, .completeLocalName])
        XCTAssertEqual(AdvertisementSummary(parsing: slice).localName, "Nordic")
    }

    func testHugeGarbageAndSeededFuzzNeverCrash() {
        var rng = SplitMix64(seed: 0x5EED)
        let huge = (0 ..< 70_000).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
        _ = AdvertisementSummary(parsing: huge)
        _ = AdvertisementKeys(scanning: huge)

        let seeds = [Frames.iBeacon, Frames.eddystoneUID, Frames.eddystoneURL, Frames.eddystoneTLM,
                     Frames.appleContinuity, Frames.microsoftCDP, Frames.nordicUART, Frames.batteryService].map { bytes($0) }
        var counters = AdvertisingDataCounters()
        for round in 0 ..< 100_000 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = (0 ..< Int.random(in: 0 ... 64, using: &rng)).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
            } else {
                // Mutations of real frames reach deeper into the decoders than pure noise.
                input = seeds[Int.random(in: 0 ..< seeds.count, using: &rng)]
                for _ in 0 ..< Int.random(in: 1 ... 4, using: &rng) {
                    switch Int.random(in: 0 ..< 3, using: &rng) {
                    case 0 where !input.isEmpty: input[Int.random(in: 0 ..< input.count, using: &rng)] = UInt8.random(in: 0 ... 255, using: &rng)
                    case 1 where !input.isEmpty: input.removeLast(Int.random(in: 1 ... input.count, using: &rng))
                    default: input.append(UInt8.random(in: 0 ... 255, using: &rng))
                    }
                }
            }
            let summary = AdvertisementSummary(parsing: input)
            let keys = AdvertisementKeys(scanning: input)
            // The hot path and the full decode must agree on what matching depends on.
            XCTAssertEqual(keys.iBeacon, summary.iBeacon)
            XCTAssertEqual(keys.malformations.contains(.lengthPastEnd), summary.malformations.contains(.lengthPastEnd))
            if case let .uid(uid, _)? = summary.eddystone.first(where: { if case .uid = $0 { true } else { false } }) {
                XCTAssertEqual(keys.eddystoneUID, uid)
            }
            counters.record(keys.malformations)
        }
        XCTAssertGreaterThan(counters.malformedReports, 0)
    }
}
