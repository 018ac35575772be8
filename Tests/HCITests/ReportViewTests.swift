import SplitMix
import XCTest
@testable import HCI

/// `LEAdvertisingReportView` must agree with `LEAdvertisingReport`'s decoders byte for
/// byte: the same events accepted, the same reports seen.
final class ReportViewTests: XCTestCase {
    /// The views of an event, made into reports; nil when `validate` rejects it.
    private func viewReports(_ subevent: LESubeventCode, _ parameters: [UInt8]) -> [LEAdvertisingReport]? {
        parameters.withUnsafeBufferPointer { bytes in
            guard let summary = LEAdvertisingReportView.validate(subevent: subevent, parameters: bytes) else { return nil }
            var reports = [LEAdvertisingReport]()
            LEAdvertisingReportView.forEach(subevent: subevent, parameters: bytes) { reports.append($0.makeReport()) }
            XCTAssertEqual(reports.count, summary.count)
            return reports
        }
    }

    private func decoded(_ subevent: LESubeventCode, _ parameters: [UInt8]) -> [LEAdvertisingReport]? {
        switch subevent {
        case .advertisingReport: try? LEAdvertisingReport.decodeLegacyReports(parameters[...])
        default: try? LEAdvertisingReport.decodeExtendedReports(parameters[...])
        }
    }

    private func sampleEvents(_ random: inout SplitMix64) -> [(LESubeventCode, [UInt8])] {
        var events: [(LESubeventCode, [UInt8])] = []
        let legacyKinds: [LEAdvertisingReport.Properties] = [
            [.legacy, .connectable, .scannable], [.legacy, .scannable, .scanResponse], [.legacy, .connectable, .directed],
            [.legacy, .scannable], [.legacy],
        ]
        for _ in 0 ..< 40 {
            let count = Int.random(in: 1 ... 4, using: &random)
            var legacy: [UInt8] = [UInt8(count)]
            var extended: [UInt8] = [UInt8(count)]
            for _ in 0 ..< count {
                let data = random.bytes(Int.random(in: 0 ... 31, using: &random))
                let report = LEAdvertisingReport(
                    properties: legacyKinds.randomElement(using: &random)!,
                    addressType: AddressType(rawValue: UInt8.random(in: 0 ... 3, using: &random)),
                    address: BluetoothAddress(rawValue: UInt64.random(in: 0 ... 0xFFFF_FFFF_FFFF, using: &random)),
                    rssi: Bool.random(using: &random) ? nil : Int8.random(in: -127 ... 20, using: &random), data: data[...]
                )
                report.encodeLegacy(into: &legacy)
                var ext = report
                ext.properties = LEAdvertisingReport.Properties(rawValue: UInt16.random(in: 0 ... 0x1F, using: &random))
                ext.dataStatus = LEAdvertisingReport.DataStatus(rawValue: UInt8.random(in: 0 ... 3, using: &random))
                ext.primaryPHY = LEPhy(rawValue: UInt8.random(in: 1 ... 3, using: &random))
                ext.sid = Bool.random(using: &random) ? nil : UInt8.random(in: 0 ... 15, using: &random)
                ext.txPower = Bool.random(using: &random) ? nil : Int8.random(in: -127 ... 20, using: &random)
                ext.periodicAdvertisingInterval = UInt16.random(in: 0 ... 100, using: &random)
                if ext.properties.contains(.directed) {
                    ext.directAddressType = .randomDevice
                    ext.directAddress = BluetoothAddress(rawValue: 0x4000_0000_0042)
                }
                ext.data = random.bytes(Int.random(in: 0 ... 60, using: &random))[...]
                ext.encodeExtended(into: &extended)
            }
            events.append((.advertisingReport, legacy))
            events.append((.extendedAdvertisingReport, extended))
        }
        return events
    }

    func testViewsAreTheDecodedReports() throws {
        var random = SplitMix64(seed: 7)
        for (subevent, parameters) in sampleEvents(&random) {
            let expected = try XCTUnwrap(decoded(subevent, parameters))
            XCTAssertEqual(viewReports(subevent, parameters), expected)
        }
    }

    /// Mutated and truncated events: accepted exactly when the decoder accepts them, and
    /// then with the same reports; never a trap.
    func testMalformedEventsAreRejectedAlike() {
        var random = SplitMix64(seed: 11)
        var rejected = 0
        for (subevent, parameters) in sampleEvents(&random) {
            for _ in 0 ..< 30 {
                var bytes = parameters
                switch Int.random(in: 0 ... 2, using: &random) {
                case 0:
                    bytes[Int.random(in: 0 ..< bytes.count, using: &random)] = UInt8.random(in: 0 ... 255, using: &random)
                case 1:
                    bytes.removeLast(Int.random(in: 1 ... bytes.count, using: &random))
                default:
                    bytes += random.bytes(Int.random(in: 1 ... 3, using: &random))
                }
                let expected = decoded(subevent, bytes)
                if expected == nil { rejected += 1 }
                XCTAssertEqual(viewReports(subevent, bytes), expected, "\(subevent) \(bytes)")
            }
        }
        XCTAssertGreaterThan(rejected, 100, "the mutations should break many events")
    }

    func testOtherSubeventsAreNotReports() {
        [UInt8]([1, 0, 0]).withUnsafeBufferPointer { bytes in
            XCTAssertNil(LEAdvertisingReportView.validate(subevent: .connectionComplete, parameters: bytes))
        }
    }
}
