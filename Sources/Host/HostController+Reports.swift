import HCI

/// Where the reports of a packet go; see `HostController.routeAdvertisingReports`.
public enum AdvertisingReportRoute: Hashable, Sendable {
    /// Not an advertising report event, or a malformed one: give the packet to `handle`.
    case notReports
    /// Valid, counted, and needing no reassembly: read the reports in place with
    /// `LEAdvertisingReportView.forEach(subevent:parameters:)` from the payload's
    /// parameters (the bytes from `parametersOffset` on).
    case inPlace(LESubeventCode)
    /// Valid and counted; fragments were joined, and what is to be delivered was
    /// appended to the buffer.
    case buffered

    /// Event code, parameter length and subevent code come before the parameters.
    public static let parametersOffset = 3
}

extension HostController {
    /// The hot path without even a report value per report: validates an advertising
    /// report event and counts it, so the caller can read the reports in place from the
    /// packet's payload (`type` and the payload's bytes, borrowed: a packet value would
    /// cost an atomic retain and release per event). Extended reports that need
    /// reassembly (fragments, or anything pending) are joined and appended to `reports`.
    public mutating func routeAdvertisingReports(
        type: HCIPacketType, payload: UnsafeBufferPointer<UInt8>, into reports: inout [LEAdvertisingReport]
    ) -> AdvertisingReportRoute {
        guard type == .event, payload.count >= AdvertisingReportRoute.parametersOffset,
              EventCode(rawValue: payload[0]) == .leMeta, Int(payload[1]) == payload.count - 2
        else { return .notReports }
        let subevent = LESubeventCode(rawValue: payload[2])
        let parameters = UnsafeBufferPointer(rebasing: payload[AdvertisingReportRoute.parametersOffset...])
        guard let summary = LEAdvertisingReportView.summary(subevent: subevent, parameters: parameters) else {
            return .notReports
        }
        counters.packetsReceived += 1
        // Legacy reports never meet the reassembler; whole extended ones pass it untouched
        // unless a fragment of the same advertiser waits there.
        if summary.allComplete, subevent == .advertisingReport || reassembler.pendingAdvertisers == 0 {
            counters.advertisingReports += summary.count
            return .inPlace(subevent)
        }
        // The rare way: reports are delivered after the reassembler had them, so each one
        // delivered becomes a value of its own.
        let before = reports.count
        LEAdvertisingReportView.forEach(subevent: subevent, parameters: parameters) { view in
            switch reassembler.accept(view) {
            case .asItCame: reports.append(view.makeReport())
            case .instead(let whole): reports.append(whole)
            case .nothing: break
            }
        }
        counters.advertisingReports += reports.count - before
        return .buffered
    }
}
