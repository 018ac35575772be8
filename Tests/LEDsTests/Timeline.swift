import EventLoop
import XCTest
@testable import LEDs

/// One visible change: from `milliseconds` after the origin the LEDs show `levels`.
struct Step: Equatable, CustomStringConvertible {
    var milliseconds: Int64
    var levels: LEDLevels

    /// `"G.."` style: G/A/R lit, `.` dark.
    init(_ milliseconds: Int64, _ pattern: String) {
        self.milliseconds = milliseconds
        let chars = Array(pattern)
        levels = LEDLevels(green: chars[0] == "G", amber: chars[1] == "A", red: chars[2] == "R")
    }

    init(milliseconds: Int64, levels: LEDLevels) {
        self.milliseconds = milliseconds
        self.levels = levels
    }

    var description: String {
        "\(milliseconds)ms:\(levels.green ? "G" : ".")\(levels.amber ? "A" : ".")\(levels.red ? "R" : ".")"
    }
}

func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

extension LEDPatternEngine {
    /// The timeline from `start` to `end` as the driver would see it: the levels at
    /// `start`, then one step per `nextChange`.
    func timeline(from start: Int64, to end: Int64) -> [Step] {
        var steps = [Step(milliseconds: start, levels: levels(at: ms(start)))]
        var now = ms(start)
        while let next = nextChange(after: now), next < ms(end) {
            XCTAssertGreaterThan(next, now, "nextChange must move forward")
            steps.append(Step(milliseconds: next.nanoseconds / 1_000_000, levels: levels(at: next)))
            now = next
        }
        return steps
    }

    /// The same timeline by brute force, sampling every millisecond: proves that
    /// `nextChange` misses nothing and reports no change that is not one.
    func sampledTimeline(from start: Int64, to end: Int64) -> [Step] {
        var steps: [Step] = []
        for t in start ..< end {
            let levels = levels(at: ms(t))
            if steps.last?.levels != levels { steps.append(Step(milliseconds: t, levels: levels)) }
        }
        return steps
    }
}

func assertTimeline(_ engine: LEDPatternEngine, from start: Int64, to end: Int64, _ expected: [Step], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(engine.timeline(from: start, to: end), expected, "nextChange timeline", file: file, line: line)
    XCTAssertEqual(engine.sampledTimeline(from: start, to: end), expected, "sampled every ms", file: file, line: line)
}
