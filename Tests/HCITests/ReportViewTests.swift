import SplitMix
import XCTest
@testable import HCI

/// `LEAdvertisingReportView`, the one reader of the report layouts, must agree byte for
/// byte with a plain field-by-field reading of the specification's layout (`reference`,
/// below): the same events accepted, the same reports seen, the same errors thrown.
final class ReportViewTests: XCTestCase {
    /// The views of an event, made into reports; nil when `summary` (and `validate`)
    /// reject it.
    private func viewReports(_ subevent: LESubeventCode, _ parameters: [UInt8]) -> [LEAdvertisingReport]? {
        parameters.withUnsafeBufferPointer { bytes in
            let summary = LEAdvertisingReportView.summary(subevent: subevent, parameters: bytes)
            XCTAssertEqual(summary, try? LEAdvertisingReportView.validate(subevent: subevent, parameters: bytes))
            guard let summary else { return nil }
            var reports = [LEAdvertisingReport]()
            LEAdvertisingReportView.forEach(subevent: subevent, parameters: bytes) { reports.append($0.makeReport()) }
            XCTAssertEqual(reports.count, summary.count)
            return reports
        }
    }

    private func decoded(_ subevent: LESubeventCode, _ parameters: [UInt8]) -> Result<[LEAdvertisingReport], HCIDecodingError> {
        Result { () throws(HCIDecodingError) in try LEAdvertisingReport.decodeReports(subevent: subevent, parameters: parameters[...]) }
    }

    /// The test's own reading of the layouts, one field after another with
    /// `HCIByteReader`, as the specification lists them; a bad event is rejected whole
    /// (lengths first, then the first reserved legacy event type).
    private func reference(_ subevent: LESubeventCode, _ parameters: [UInt8]) -> Result<[LEAdvertisingReport], HCIDecodingError> {
        Result { () throws(HCIDecodingError) in
            let legacy = subevent == .advertisingReport
            let context = HCIDecodingError.Context.leSubevent(subevent)
            let fixedLength = legacy ? 10 : 24
            var reader = HCIByteReader(parameters, context: context)
            let count = Int(try reader.u8())
            guard count >= 1, count * fixedLength <= reader.remaining else { throw .countDoesNotFit(context, count: count) }
            // The lengths of the whole event first.
            var index = 1
            for report in 0 ..< count {
                guard parameters.count - index >= fixedLength else { throw .dataRunsPastEnd(context, report: report) }
                let length = Int(parameters[index + (legacy ? 8 : 23)])
                guard parameters.count - index - fixedLength >= length else { throw .dataRunsPastEnd(context, report: report) }
                index += fixedLength + length
            }
            guard index == parameters.count else { throw .trailingBytes(context, count: parameters.count - index) }
            var reports = [LEAdvertisingReport]()
            for _ in 0 ..< count {
                if legacy {
                    let eventType = LEAdvertisingReport.LegacyEventType(rawValue: try reader.u8())
                    guard let properties = eventType.properties else {
                        throw .invalidValue(context, field: .legacyEventType, value: Int(eventType.rawValue))
                    }
                    let addressType = AddressType(rawValue: try reader.u8())
                    let address = try reader.address()
                    let data = try reader.slice(Int(try reader.u8()))
                    let rssi = try reader.i8()
                    reports.append(LEAdvertisingReport(properties: properties, addressType: addressType, address: address,
                                                       rssi: rssi == 127 ? nil : rssi, data: data))
                } else {
                    let eventType = try reader.u16()
                    let addressType = AddressType(rawValue: try reader.u8())
                    let address = try reader.address()
                    let primaryPHY = LEPhy(rawValue: try reader.u8())
                    let secondaryPHY = LEPhy(rawValue: try reader.u8())
                    let sid = try reader.u8()
                    let txPower = try reader.i8()
                    let rssi = try reader.i8()
                    let interval = try reader.u16()
                    let directAddressType = AddressType(rawValue: try reader.u8())
                    let directAddress = try reader.address()
                    let data = try reader.slice(Int(try reader.u8()))
                    let properties = LEAdvertisingReport.Properties(rawValue: eventType & ~(0b11 << 5))
                    let directed = properties.contains(.directed)
                    reports.append(LEAdvertisingReport(
                        properties: properties, dataStatus: .init(rawValue: UInt8(eventType >> 5 & 0b11)),
                        addressType: addressType, address: address, primaryPHY: primaryPHY, secondaryPHY: secondaryPHY,
                        sid: sid == 0xFF ? nil : sid, txPower: txPower == 127 ? nil : txPower, rssi: rssi == 127 ? nil : rssi,
                        periodicAdvertisingInterval: interval, directAddressType: directed ? directAddressType : nil,
                        directAddress: directed ? directAddress : nil, data: data
                    ))
                }
            }
            return reports
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
            let expected = try reference(subevent, parameters).get()
            XCTAssertEqual(viewReports(subevent, parameters), expected)
            XCTAssertEqual(decoded(subevent, parameters), .success(expected))
        }
    }

    /// Mutated and truncated events: accepted exactly when the reference reading accepts
    /// them, and then with the same reports, else with the same error; never a trap.
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
                let expected = reference(subevent, bytes)
                if case .failure = expected { rejected += 1 }
                XCTAssertEqual(viewReports(subevent, bytes), try? expected.get(), "\(subevent) \(bytes)")
                XCTAssertEqual(decoded(subevent, bytes), expected, "\(subevent) \(bytes)")
            }
        }
        XCTAssertGreaterThan(rejected, 100, "the mutations should break many events")
    }

    func testOtherSubeventsAreNotReports() throws {
        let summary = try [UInt8]([1, 0, 0]).withUnsafeBufferPointer { bytes in
            try LEAdvertisingReportView.validate(subevent: .connectionComplete, parameters: bytes)
        }
        XCTAssertNil(summary)
        [UInt8]([1, 0, 0]).withUnsafeBufferPointer { bytes in
            XCTAssertNil(LEAdvertisingReportView.summary(subevent: .connectionComplete, parameters: bytes))
        }
    }
}
