import Advertisements
import HCI
import JSONText

extension AdvertiserSnapshot {
    /// Column widths of the terminal table; the identity column takes what is left of a
    /// typical 120-column terminal.
    public struct TableLayout: Sendable {
        public var identityWidth = 44
        public var personWidth = 24
        public init() {}
    }

    /// The live `scan` view: a header and one fixed-width line per advertiser, in the
    /// order given (use `AdvertiserTable.snapshots(now:)`, strongest first).
    public static func textTable(_ snapshots: [AdvertiserSnapshot], layout: TableLayout = TableLayout()) -> String {
        var lines = [headerLine(layout)]
        lines.reserveCapacity(snapshots.count + 1)
        for snapshot in snapshots { lines.append(snapshot.textLine(layout)) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func headerLine(_ layout: TableLayout) -> String {
        pad("ADDRESS", 17) + " " + pad("TYPE", 6) + " " + pad("IDENTITY", layout.identityWidth) + " "
            + padLeft("RSSI", 4) + " " + padLeft("MED", 4) + " " + padLeft("RPT/S", 6) + " "
            + pad("PERSON/TAG", layout.personWidth)
    }

    /// One row: address, type, identity, RSSI last and median, reports/s, person/tag.
    public func textLine(_ layout: TableLayout = TableLayout()) -> String {
        let last = rssi.map { String($0.last) } ?? "-"
        let median = rssi.map { String($0.median) } ?? "-"
        let rate = JSONWriter.format(reportsPerSecond, fractionDigits: 1) ?? "-"
        let who: String = switch (personId, tagId) {
        case let (person?, tag?): "\(person)/\(tag)"
        case let (person?, nil): person
        case let (nil, tag?): tag
        case (nil, nil): "-"
        }
        let line = Self.pad(address.description, 17) + " " + Self.pad(addressType.jsonName, 6) + " "
            + Self.pad(identity.displayText, layout.identityWidth) + " "
            + Self.padLeft(last, 4) + " " + Self.padLeft(median, 4) + " " + Self.padLeft(rate, 6) + " "
            + Self.pad(Self.terminalSafe(who), layout.personWidth)
        return String(line.reversed().drop(while: { $0 == " " }).reversed())
    }

    /// Cut to `width` characters (with an ellipsis) or padded with spaces.
    static func pad(_ text: String, _ width: Int) -> String {
        let count = text.count
        if count > width { return String(text.prefix(max(width - 1, 0))) + "…" }
        return text + String(repeating: " ", count: width - count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        let count = text.count
        if count >= width { return text }
        return String(repeating: " ", count: width - count) + text
    }

    /// Advertised names are untrusted: an escape sequence in one must not reach the
    /// terminal, so control characters (C0, DEL, C1) are shown as U+FFFD.
    static func terminalSafe(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            scalars.append(value < 0x20 || (0x7F ... 0x9F).contains(value) ? "\u{FFFD}" : scalar)
        }
        return String(scalars)
    }
}

extension AdvertisementIdentity {
    /// A compact one-line description for the terminal: beacon ids first, then URL,
    /// telemetry, name, manufacturer, services.
    public var displayText: String {
        var parts: [String] = []
        if let iBeacon { parts.append("iBeacon \(iBeacon)") }
        if let eddystoneUID { parts.append("Eddystone-UID \(eddystoneUID)") }
        if let eddystoneURL { parts.append("Eddystone-URL \(eddystoneURL)") }
        if let tlm = eddystoneTLM {
            var text = "TLM \(tlm.batteryMillivolts) mV"
            if let celsius = tlm.temperatureCelsius, let formatted = JSONWriter.format(celsius, fractionDigits: 1) {
                text += " \(formatted) °C"
            }
            parts.append(text)
        }
        if let name { parts.append("\"\(name)\"") }
        if let manufacturer { parts.append(manufacturer.description) }
        if !serviceUUIDs.isEmpty { parts.append("uuids " + serviceUUIDs.map(\.description).joined(separator: ",")) }
        return parts.isEmpty ? "-" : AdvertiserSnapshot.terminalSafe(parts.joined(separator: " "))
    }
}
