import HCI
import XCTest
@testable import Host

/// The hot path for advertising reports (`routeAdvertisingReports`) must deliver and
/// count exactly what `handle` does.
final class ReportFastPathTests: XCTestCase {
    private func extended(_ address: UInt64, _ data: [UInt8], _ status: LEAdvertisingReport.DataStatus) -> LEAdvertisingReport {
        LEAdvertisingReport(properties: [.connectable], dataStatus: status, addressType: .randomDevice,
                            address: BluetoothAddress(rawValue: address), secondaryPHY: .le1M, sid: 1, rssi: -60, data: data[...])
    }

    private func legacy(_ address: UInt64, _ data: [UInt8]) -> LEAdvertisingReport {
        LEAdvertisingReport(properties: [.legacy, .connectable, .scannable], addressType: .publicDevice,
                            address: BluetoothAddress(rawValue: address), rssi: -50, data: data[...])
    }

    /// Legacy and extended events, fragments (joined across events, with whole reports
    /// in between), malformed report events and an event that is no report.
    private var packets: [HCIPacket] {
        var packets = [
            HCIEvent.leMeta(.advertisingReport([legacy(1, [1, 2]), legacy(2, [])])).packet,
            HCIEvent.leMeta(.extendedAdvertisingReport([extended(3, [3], .complete)])).packet,
            HCIEvent.leMeta(.extendedAdvertisingReport([extended(4, [4, 4], .incompleteMoreToCome), extended(5, [5], .complete)])).packet,
            HCIEvent.leMeta(.extendedAdvertisingReport([extended(5, [5, 5], .complete)])).packet,
            HCIEvent.leMeta(.advertisingReport([legacy(6, [6])])).packet,
            HCIEvent.leMeta(.extendedAdvertisingReport([extended(4, [4], .complete)])).packet,
            HCIEvent.leMeta(.extendedAdvertisingReport([extended(7, [7], .incompleteTruncated)])).packet,
            HCIEvent.hardwareError(code: 1).packet,
        ]
        var badType = HCIEvent.leMeta(.advertisingReport([legacy(8, [8]), legacy(9, [9])])).packet
        badType.payload[3 + 1 + 10 + 1] = 0x07 // the second report's event type: reserved
        var truncated = HCIEvent.leMeta(.extendedAdvertisingReport([extended(10, [1, 2, 3], .complete)])).packet
        truncated.payload.removeLast()
        truncated.payload[1] -= 1
        packets += [badType, truncated]
        return packets
    }

    func testFastPathsDeliverAndCountAsHandleDoes() {
        var slow = HostController()
        var slowReports = [LEAdvertisingReport]()
        for packet in packets {
            for case .advertisingReports(let reports) in slow.handle(.packetReceived(packet), now: .zero) { slowReports += reports }
        }

        var routing = HostController()
        var routedReports = [LEAdvertisingReport]()
        var inPlaceEvents = 0
        for packet in packets {
            var buffer = [LEAdvertisingReport]()
            let route = packet.payload.withUnsafeBufferPointer {
                routing.routeAdvertisingReports(type: packet.type, payload: $0, into: &buffer)
            }
            switch route {
            case .inPlace(let subevent):
                inPlaceEvents += 1
                packet.payload.withUnsafeBufferPointer { bytes in
                    let parameters = UnsafeBufferPointer(rebasing: bytes[AdvertisingReportRoute.parametersOffset...])
                    LEAdvertisingReportView.forEach(subevent: subevent, parameters: parameters) { routedReports.append($0.makeReport()) }
                }
            case .buffered:
                routedReports += buffer
            case .notReports:
                for case .advertisingReports(let reports) in routing.handle(.packetReceived(packet), now: .zero) { routedReports += reports }
            }
        }
        XCTAssertEqual(slowReports.map(\.address.rawValue), [1, 2, 3, 5, 5, 6, 4, 7])
        XCTAssertEqual(routedReports, slowReports)
        // Legacy, whole extended, and the legacy one while a fragment was pending.
        XCTAssertEqual(inPlaceEvents, 3)
        XCTAssertEqual(routing.counters, slow.counters)
        XCTAssertEqual(slow.counters.malformedEvents, 2)
        XCTAssertEqual(routing.reassemblyCounters, slow.reassemblyCounters)
    }
}
