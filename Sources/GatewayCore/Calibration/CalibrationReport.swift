/// RSSI statistics of one tag heard while the installer stands at the door threshold,
/// and the `enter_rssi` / `exit_rssi` they suggest (`beacon-gateway calibrate`).
public struct CalibrationReport: Hashable, Sendable {
    public var count: Int
    public var median: Int
    /// First and third quartiles (nearest-rank), and their difference.
    public var lowerQuartile: Int
    public var upperQuartile: Int
    public var interquartileRange: Int { upperQuartile - lowerQuartile }
    public var minimum: Int
    public var maximum: Int
    /// Median gap between consecutive reports, in milliseconds; nil with fewer than two.
    public var observedIntervalMilliseconds: Double?
    public var suggestedEnterRSSI: Int
    public var suggestedExitRSSI: Int

    /// The smallest gap between `enter_rssi` and `exit_rssi` that is suggested: below
    /// about 5 dB, body shadowing and multipath alone flip a standing person in and out.
    public static let minimumHysteresis = 5

    /// - Parameters:
    ///   - samples: RSSI values in dBm, in the order heard.
    ///   - times: when each was heard, in nanoseconds on a monotonic clock (same count).
    /// - Returns: nil without samples.
    public init?(rssi samples: [Int], timesNanoseconds times: [Int64]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func rank(_ fraction: Double) -> Int {
            // Nearest-rank percentile: the smallest value with at least `fraction` of the
            // samples at or below it.
            let index = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        count = samples.count
        median = rank(0.5)
        lowerQuartile = rank(0.25)
        upperQuartile = rank(0.75)
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
        if times.count >= 2 {
            var gaps: [Int64] = []
            gaps.reserveCapacity(times.count - 1)
            for index in 1 ..< times.count where times[index] >= times[index - 1] {
                gaps.append(times[index] - times[index - 1])
            }
            gaps.sort()
            observedIntervalMilliseconds = gaps.isEmpty ? nil : Double(gaps[(gaps.count - 1) / 2]) / 1e6
        } else {
            observedIntervalMilliseconds = nil
        }
        // Standing at the threshold must count as "at the door": the median filter of the
        // agent must stay above enter_rssi there, so enter_rssi sits just under the lower
        // quartile (three quarters of the samples, and so the median, are above it).
        suggestedEnterRSSI = max(min(lowerQuartile - 1, 20), -126)
        // Leaving must take a clear drop, not noise: at least the spread of the samples
        // seen standing still, and never less than the minimum hysteresis.
        suggestedExitRSSI = max(suggestedEnterRSSI - max(Self.minimumHysteresis, upperQuartile - lowerQuartile), -127)
    }

    /// The lines `calibrate` prints, with the reasoning behind the suggestion.
    public func render(tag: String) -> String {
        var lines: [String] = []
        lines.append("tag \(tag): \(count) reports")
        lines.append("rssi median \(median) dBm, IQR \(interquartileRange) dB (\(lowerQuartile) … \(upperQuartile)), min \(minimum), max \(maximum)")
        if let interval = observedIntervalMilliseconds {
            let tenths = Int((interval * 10).rounded())
            lines.append("observed advertising interval \(tenths / 10).\(tenths % 10) ms (median gap between reports)")
        } else {
            lines.append("observed advertising interval: too few reports to tell")
        }
        lines.append("suggested: enter_rssi = \(suggestedEnterRSSI), exit_rssi = \(suggestedExitRSSI)")
        lines.append("  enter_rssi is 1 dB under the lower quartile (\(lowerQuartile)), so the agent's median filter stays above it")
        lines.append("  while a person stands where you stood; exit_rssi is max(\(Self.minimumHysteresis) dB, IQR \(interquartileRange) dB) lower,")
        lines.append("  so noise of the size seen here cannot end a visit.")
        if count < 20 {
            lines.append("  (few reports: stand still longer, e.g. --seconds 30, for a steadier figure)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
