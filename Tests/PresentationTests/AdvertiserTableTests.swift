@testable import Advertisements
import EventLoop
import HCI
import XCTest
import JSONText
@testable import Presentation
import AdvertisingFixtures

final class AdvertiserTableTests: XCTestCase {
    let tagAddress = BluetoothAddress("C0:11:22:33:44:55")!
    let match = TagMatch(tagIndex: 0, tagId: "tag-1001", personId: "u_1001", matchedBy: .iBeacon)

    func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

    /// 48 reports over 4.7 s, read at 5 s: the advertiser of the example in docs/cli.md.
    func specExampleTable() -> AdvertiserTable {
        var table = AdvertiserTable()
        let rssis: [Int8] = [-70, -55] + Array(repeating: -62, count: 45) + [-61]
        let data = bytes(Frames.iBeacon)
        for (i, rssi) in rssis.enumerated() {
            table.record(address: tagAddress, addressType: .randomDevice, rssi: rssi, connectable: true,
                         data: data[...], match: match, at: ms(Int64(i) * 100))
        }
        return table
    }

    func testJSONLineMatchesSpecExample() throws {
        let table = specExampleTable()
        let snapshot = try XCTUnwrap(table.advertiser(address: tagAddress, addressType: .randomDevice, now: ms(5000)))
        XCTAssertEqual(snapshot.jsonLine(final: true), """
        {"address": "C0:11:22:33:44:55", "addressType": "random", "reports": 48, \
        "reportsPerSecond": 9.6, "rssi": {"last": -61, "median": -62, "min": -70, "max": -55}, \
        "identity": {"ibeacon": "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:1"}, \
        "txPower": -59, "connectable": true, "person": "u_1001", "tag": "tag-1001", \
        "final": true}
        """)
    }

    func testJSONLineForUnknownDeviceEscapesAndNulls() {
        var table = AdvertiserTable()
        let address = BluetoothAddress("00:1A:7D:DA:71:13")!
        // Name `Bad"\<ESC>[2J` with a quote, a backslash and a terminal escape; 16-bit UUIDs.
        let data = bytes("020106 05030f180a18 0a09 42616422 5c 1b5b324a".replacingOccurrences(of: " ", with: ""))
        table.record(address: address, addressType: .publicDevice, rssi: AdvertiserTable.rssiUnavailable,
                     connectable: false, data: data[...], match: nil, at: ms(0))
        let line = table.snapshots(now: ms(500)).first?.jsonLine(final: false)
        XCTAssertEqual(line, """
        {"address": "00:1A:7D:DA:71:13", "addressType": "public", "reports": 1, "reportsPerSecond": 1.0, \
        "rssi": null, "identity": {"name": "Bad\\"\\\\\\u001b[2J", "serviceUuids": ["180f", "180a"]}, \
        "txPower": null, "connectable": false, "person": null, "tag": null, "final": false}
        """)
        let text = AdvertiserSnapshot.textTable(table.snapshots(now: ms(500)))
        XCTAssertFalse(text.unicodeScalars.contains("\u{1B}"))
    }

    func testManufacturerAndEddystoneIdentity() throws {
        var table = AdvertiserTable()
        let address = BluetoothAddress("D0:00:00:00:00:01")!
        table.record(address: address, addressType: .randomDevice, rssi: -50, connectable: false,
                     data: bytes(Frames.microsoftSwiftPair)[...], match: nil, at: ms(0))
        var json = JSONWriter()
        table.advertiser(address: address, addressType: .randomDevice, now: ms(0))?.identity.writeJSON(to: &json)
        XCTAssertEqual(json.text, #"{"manufacturer": 6}"#)

        // A beacon rotating UID and TLM frames keeps showing its UID.
        let beacon = BluetoothAddress("D0:00:00:00:00:02")!
        table.record(address: beacon, addressType: .randomDevice, rssi: -60, connectable: false,
                     data: bytes(Frames.eddystoneUID)[...], match: nil, at: ms(0))
        table.record(address: beacon, addressType: .randomDevice, rssi: -60, connectable: false,
                     data: bytes(Frames.eddystoneTLM)[...], match: nil, at: ms(100))
        let snapshot = try XCTUnwrap(table.advertiser(address: beacon, addressType: .randomDevice, now: ms(100)))
        XCTAssertEqual(snapshot.identity.eddystoneUID?.description, "edd1ebeac04e5defa017:0123456789ab")
        XCTAssertEqual(snapshot.identity.eddystoneTLM?.batteryMillivolts, 3000)
        XCTAssertEqual(snapshot.txPower, -24)
        XCTAssertTrue(snapshot.identity.displayText.contains("Eddystone-UID edd1ebeac04e5defa017:0123456789ab"))
    }

    func testScanResponseNameIsKeptApartFromAdvertisement() throws {
        var table = AdvertiserTable()
        let address = BluetoothAddress("D0:00:00:00:00:03")!
        table.record(address: address, addressType: .randomDevice, rssi: -40, connectable: true,
                     data: bytes(Frames.appleContinuity)[...], match: nil, at: ms(0))
        table.record(address: address, addressType: .randomDevice, rssi: -41, connectable: false, isScanResponse: true,
                     data: bytes("0709 4e6f72646963")[...], match: nil, at: ms(10))
        table.record(address: address, addressType: .randomDevice, rssi: -42, connectable: true,
                     data: bytes(Frames.appleContinuity)[...], match: nil, at: ms(20))
        let snapshot = try XCTUnwrap(table.advertiser(address: address, addressType: .randomDevice, now: ms(20)))
        XCTAssertEqual(snapshot.identity.name, "Nordic")
        XCTAssertEqual(snapshot.identity.manufacturer, .apple)
        XCTAssertEqual(snapshot.txPower, 12)
        XCTAssertTrue(snapshot.connectable)
        XCTAssertEqual(snapshot.reports, 3)
    }

    /// Data up to 32 bytes is kept inline and longer (extended) data apart: whichever came
    /// last is what the snapshot decodes, across every switch between the two.
    func testShortAndLongDataAlternate() throws {
        var table = AdvertiserTable()
        let address = BluetoothAddress("D0:00:00:00:00:05")!
        func name(_ text: String) -> [UInt8] { [UInt8(text.utf8.count + 1), 0x09] + Array(text.utf8) }
        let long = name(String(repeating: "L", count: 60)) // 62 bytes: extended advertising only
        let short = name("Short")
        let exactlyInline = name(String(repeating: "x", count: 30)) // 32 bytes
        for (step, data) in [long, short, long, exactlyInline, short, long].enumerated() {
            table.record(address: address, addressType: .randomDevice, rssi: -50, connectable: false,
                         data: data[...], match: nil, at: ms(Int64(step)))
            let snapshot = try XCTUnwrap(table.advertiser(address: address, addressType: .randomDevice, now: ms(10)))
            XCTAssertEqual(snapshot.identity.name.map { Array($0.utf8) }, Array(data.dropFirst(2)), "step \(step)")
        }
        // Longer than any advertisement can be: kept up to the extended maximum only.
        let huge = [UInt8](repeating: 0, count: AdvertiserTable.maximumDataLength + 100)
        table.record(address: address, addressType: .randomDevice, rssi: -50, connectable: false,
                     data: huge[...], match: nil, at: ms(20))
        XCTAssertEqual(table.advertiser(address: address, addressType: .randomDevice, now: ms(20))?.reports, 7)
    }

    func testMedianIsOverRecentWindowMinMaxOverRun() throws {
        var table = AdvertiserTable(capacity: 10, rssiWindow: 4)
        let address = BluetoothAddress("D0:00:00:00:00:04")!
        for (i, rssi) in ([-90, -30, -50, -51, -52, -53] as [Int8]).enumerated() {
            table.record(address: address, addressType: .randomDevice, rssi: rssi, connectable: false,
                         data: [], match: nil, at: ms(Int64(i) * 1000))
        }
        table.record(address: address, addressType: .randomDevice, rssi: AdvertiserTable.rssiUnavailable,
                     connectable: false, data: [], match: nil, at: ms(6000))
        table.record(address: address, addressType: .randomDevice, rssi: nil,
                     connectable: false, data: [], match: nil, at: ms(6500))
        let stats = try XCTUnwrap(table.advertiser(address: address, addressType: .randomDevice, now: ms(10_000))?.rssi)
        // Window holds -50 -51 -52 -53: lower middle of the sorted window is -52.
        XCTAssertEqual(stats, .init(last: -53, median: -52, min: -90, max: -30))
        XCTAssertEqual(table.advertiser(address: address, addressType: .randomDevice, now: ms(10_000))?.reportsPerSecond, 0.8)
        XCTAssertEqual(table.advertiser(address: address, addressType: .randomDevice, now: ms(10_000))?.reports, 8)
    }

    func testTableIsBoundedAndEvictsLeastRecentlyHeard() {
        var table = AdvertiserTable(capacity: 3, rssiWindow: 8)
        let addresses = (1 ... 5).map { BluetoothAddress(rawValue: UInt64($0)) }
        func hear(_ i: Int, _ t: Int64) {
            table.record(address: addresses[i], addressType: .publicDevice, rssi: Int8(-40 - i), connectable: false,
                         data: bytes(Frames.batteryService)[...], match: nil, at: ms(t))
        }
        hear(0, 0)
        hear(1, 1)
        hear(2, 2)
        hear(0, 3) // 0 is now the most recently heard; 1 the least
        hear(3, 4)
        XCTAssertEqual(table.count, 3)
        XCTAssertEqual(table.evictions, 1)
        XCTAssertNil(table.advertiser(address: addresses[1], addressType: .publicDevice, now: ms(5)))
        XCTAssertEqual(table.advertiser(address: addresses[0], addressType: .publicDevice, now: ms(5))?.reports, 2)
        hear(4, 5)
        XCTAssertNil(table.advertiser(address: addresses[2], addressType: .publicDevice, now: ms(6)))
        // The recycled slot starts clean.
        let fresh = table.advertiser(address: addresses[4], addressType: .publicDevice, now: ms(6))
        XCTAssertEqual(fresh?.reports, 1)
        XCTAssertEqual(fresh?.rssi, .init(last: -44, median: -44, min: -44, max: -44))
        XCTAssertEqual(fresh?.identity.name, "Tag1")
        XCTAssertEqual(table.snapshots(now: ms(6)).map(\.address), [addresses[0], addresses[3], addresses[4]])
        XCTAssertEqual(table.reports, 6)

        // Many more advertisers than capacity: the bound holds.
        for i in 0 ..< 1000 {
            table.record(address: BluetoothAddress(rawValue: UInt64(100 + i)), addressType: .randomDevice, rssi: -70,
                         connectable: false, data: [], match: nil, at: ms(Int64(10 + i)))
        }
        XCTAssertEqual(table.count, 3)
        XCTAssertEqual(table.evictions, 1002)
    }

    func testSameAddressDifferentTypeAreDifferentAdvertisers() {
        var table = AdvertiserTable()
        table.record(address: tagAddress, addressType: .publicDevice, rssi: -50, connectable: false, data: [], match: nil, at: ms(0))
        table.record(address: tagAddress, addressType: .randomDevice, rssi: -50, connectable: false, data: [], match: nil, at: ms(0))
        XCTAssertEqual(table.count, 2)
    }

    func testTextTable() {
        let table = specExampleTable()
        let text = AdvertiserSnapshot.textTable(table.snapshots(now: ms(5000)))
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].hasPrefix("ADDRESS           TYPE   IDENTITY"))
        XCTAssertEqual(String(lines[1]), "C0:11:22:33:44:55 random iBeacon e2c56db5-dffb-48d2-b060-d0f5a71096e… "
            + " -61  -62    9.6 u_1001/tag-1001")
    }

    func testSortingStrongestMedianFirst() {
        var table = AdvertiserTable()
        for (i, rssi) in ([-80, -40, -60] as [Int8]).enumerated() {
            table.record(address: BluetoothAddress(rawValue: UInt64(i)), addressType: .publicDevice, rssi: rssi,
                         connectable: false, data: [], match: nil, at: ms(0))
        }
        table.record(address: BluetoothAddress(rawValue: 9), addressType: .publicDevice, rssi: AdvertiserTable.rssiUnavailable,
                     connectable: false, data: [], match: nil, at: ms(0))
        XCTAssertEqual(table.snapshots(now: ms(0)).map(\.rssi?.median), [-40, -60, -80, nil])
    }

    func testJSONNumberFormatting() {
        XCTAssertEqual(JSONWriter.format(9.6, fractionDigits: 1), "9.6")
        XCTAssertEqual(JSONWriter.format(0.04, fractionDigits: 1), "0.0")
        XCTAssertEqual(JSONWriter.format(-0.05, fractionDigits: 1), "-0.1")
        XCTAssertEqual(JSONWriter.format(1234.25, fractionDigits: 2), "1234.25")
        XCTAssertNil(JSONWriter.format(.nan, fractionDigits: 1))
        XCTAssertNil(JSONWriter.format(.infinity, fractionDigits: 1))
    }
}
