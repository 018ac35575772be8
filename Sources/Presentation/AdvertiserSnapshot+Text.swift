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
    /// With `neighbours` (the site bus read, docs/cli.md) a last column: what each
    /// neighbouring door hears of the row's person, and by how much this door leads it
    /// (its median minus the neighbour's RSSI: the margin `margin_db` is compared with).
    public static func textTable(_ snapshots: [AdvertiserSnapshot], layout: TableLayout = TableLayout(),
                                 neighbours: ((AdvertiserSnapshot) -> [NeighbourReading]?)? = nil) -> String {
        var lines = [headerLine(layout) + (neighbours == nil ? "" : " NEIGHBOURS (RSSI, THIS DOOR'S LEAD)")]
        lines.reserveCapacity(snapshots.count + 1)
        for snapshot in snapshots {
            guard let neighbours, let readings = neighbours(snapshot) else {
                lines.append(snapshot.textLine(layout))
                continue
            }
            lines.append(pad(snapshot.textLine(layout), headerLine(layout).count) + " " + snapshot.neighbourText(readings))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `door-b -79 (+12), door-c -90 (+23)`, or `-` when no neighbour hears the person.
    func neighbourText(_ readings: [NeighbourReading]) -> String {
        guard !readings.isEmpty else { return "-" }
        return readings.map { reading in
            var text = "\(Self.terminalSafe(reading.neighbour)) \(reading.rssi)"
            if let median = rssi?.median {
                let lead = median - reading.rssi
                text += " (\(lead >= 0 ? "+" : "")\(lead))"
            }
            return text + (reading.holds ? " holds" : "")
        }.joined(separator: ", ")
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

/// What one neighbouring door said it hears of a person (its latest sighting, docs/neighbours.md).
public struct NeighbourReading: Hashable, Sendable {
    public var neighbour: String
    /// Its filtered RSSI of the person (dBm).
    public var rssi: Int
    /// It holds the person's visit open.
    public var holds: Bool
    /// How long ago it made the report.
    public var ageMilliseconds: Int64

    public init(neighbour: String, rssi: Int, holds: Bool, ageMilliseconds: Int64) {
        self.neighbour = neighbour
        self.rssi = rssi
        self.holds = holds
        self.ageMilliseconds = ageMilliseconds
    }
}
