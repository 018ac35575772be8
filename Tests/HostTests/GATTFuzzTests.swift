#if canImport(Glibc)
import Glibc
import SplitMix
#endif
import XCTest

/// The structural GATT fuzzer (see `GATTFuzzCase`, `HostilePeer`): hostile peers through
/// the whole client, then a genuine one. CI runs 5 000 cases (about 5 s in debug) with a fixed seed; set
/// BEACON_GATEWAY_FUZZ_CASES (and BEACON_GATEWAY_FUZZ_SEED) for more, or run
/// `scripts/fuzz-gatt` for the long runs (optimised: 10^6 cases in about a minute).
final class GATTFuzzTests: XCTestCase {
    private static func environment(_ name: String) -> UInt64? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    func testHostilePeersNeverWedgeTheClient() {
        let cases = Self.environment("BEACON_GATEWAY_FUZZ_CASES") ?? 5_000
        let seed = Self.environment("BEACON_GATEWAY_FUZZ_SEED") ?? 0x6A77_F022
        var seeds = SplitMix64(seed: seed)
        var outcomes: [String: Int] = [:]
        var findings = 0
        var mostInputs = 0
        var longest = Duration.zero
        TrapReporter.install()
        defer { TrapReporter.uninstall() }
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0 ..< cases {
            let caseSeed = seeds.next()
            TrapReporter.seed = caseSeed
            var fuzzCase = GATTFuzzCase(seed: caseSeed)
            do {
                let summary = try fuzzCase.run()
                outcomes[summary.outcome, default: 0] += 1
                mostInputs = max(mostInputs, summary.inputs)
                longest = max(longest, summary.duration)
            } catch {
                findings += 1
                XCTFail("\(error)")
                if findings >= 20 { break }
            }
        }
        let elapsed = clock.now - started
        print("GATT fuzz: \(cases) cases from seed 0x\(String(seed, radix: 16)) in \(elapsed), \(findings) findings")
        print("  at most \(mostInputs) inputs on a hostile connection, an exchange's result at most \(longest) after its start")
        for (outcome, count) in outcomes.sorted(by: { $0.value > $1.value }) { print("  \(count)\t\(outcome)") }
        // A fuzzer that never gets past the first request proves little: every stage must be reached.
        guard cases >= 5_000 else { return }
        for outcome in ["success", "success (cached)", "service missing", "characteristic missing", "ATT error response",
                        "violation: wrong opcode", "violation: mismatched error response", "violation: malformed", "violation: out of order",
                        "violation: endless discovery", "violation: oversized", "ATT transaction timed out"] {
            XCTAssertGreaterThan(outcomes[outcome] ?? 0, 0, "no case ended with \(outcome)")
        }
    }

    /// One seed, for replaying a finding: BEACON_GATEWAY_FUZZ_REPLAY=0x… swift test --filter …testReplay.
    func testReplay() throws {
        guard let seed = Self.environment("BEACON_GATEWAY_FUZZ_REPLAY") else { throw XCTSkip("no seed to replay") }
        var fuzzCase = GATTFuzzCase(seed: seed)
        XCTAssertNoThrow(print(try fuzzCase.run().outcome))
    }
}
