/// `calibrate`'s lines about the neighbouring doors (docs/cli.md, docs/neighbours.md
/// "Installing"): what each heard of the same person while the installer stood still, and
/// by how much this door led it, against `margin_db`.
extension CalibrationReport {
    /// - Parameters:
    ///   - samples: by neighbour, the RSSI of each of its sightings of the person taken
    ///     during the run.
    ///   - marginDB: `[site] margin_db`.
    ///   - busReached: whether the site bus was up at any time (else nothing could be heard).
    public func renderNeighbours(_ samples: [String: [Int]], neighbours: [String], marginDB: Double, busReached: Bool) -> String {
        guard busReached else {
            return "neighbours: the site bus could not be reached; nothing is known of what they hear\n"
        }
        var lines = ["neighbours (what each heard of the same person meanwhile; this door must lead by margin_db = \(Self.decibels(marginDB)) dB):"]
        for neighbour in (neighbours + samples.keys.filter { !neighbours.contains($0) }.sorted()) {
            guard let heard = samples[neighbour], !heard.isEmpty else {
                lines.append("  \(neighbour): did not report this person (does not hear them above its exit_rssi - 10 dB, or is silent)")
                continue
            }
            let sorted = heard.sorted()
            let theirs = sorted[(sorted.count - 1) / 2]
            let lead = median - theirs
            let verdict = Double(lead) >= marginDB ? "this door takes them here"
                : lead > 0 ? "under the margin: taken here only after 10 s as the strongest, and fading may flip them"
                : "\(neighbour) hears them better: it takes them, not this door"
            lines.append("  \(neighbour): median \(theirs) dBm over \(heard.count) reports; this door leads by \(lead) dB: \(verdict)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func decibels(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))" : "\(value)"
    }
}
