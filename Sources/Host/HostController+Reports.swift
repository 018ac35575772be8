import HCI

extension HostController {
    /// The hot path for advertising reports, which are nearly every packet while scanning:
    /// appends the reports of an LE (Extended) Advertising Report event to `reports`
    /// (extended fragments joined, as `handle(.packetReceived)` does) without building
    /// an `HCIEvent`, a `[HostAction]` or an array per event.
    ///
    /// Returns `false`, having changed nothing, for any other packet and for a malformed
    /// report event: the caller then hands that packet to `handle(_:now:into:)`, which
    /// decodes, counts and logs it as usual. Reports carry no time and change no state
    /// besides the counters and the reassembler, so skipping the timer and command pump
    /// that `handle` runs after every input only defers them to the next input or timer.
    public mutating func takeAdvertisingReports(from packet: HCIPacket, into reports: inout [LEAdvertisingReport]) -> Bool {
        let payload = packet.payload
        // Event code, parameter length, subevent code: the framing `HCIEvent(_:)` checks.
        guard packet.type == .event, payload.count >= 3, EventCode(rawValue: payload[0]) == .leMeta,
              Int(payload[1]) == payload.count - 2
        else { return false }
        let subevent = LESubeventCode(rawValue: payload[2])
        let parameters = payload[3...]
        let before = reports.count
        do {
            switch subevent {
            case .advertisingReport:
                try LEAdvertisingReport.forEachLegacyReport(parameters) { reports.append($0) }
            case .extendedAdvertisingReport:
                // The whole event is validated before the first report, so the reassembler
                // never sees fragments of an event that is then rejected.
                try LEAdvertisingReport.forEachExtendedReport(parameters) { report in
                    if let whole = reassembler.accept(report) { reports.append(whole) }
                }
            default:
                return false
            }
        } catch {
            reports.removeSubrange(before...)
            return false
        }
        counters.packetsReceived += 1
        counters.advertisingReports += reports.count - before
        return true
    }
}
