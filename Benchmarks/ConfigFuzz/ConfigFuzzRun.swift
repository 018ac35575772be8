import Config

/// What one fuzz run found: how many cases loaded, how many the input limits refused
/// before parsing, the slowest case, and every case whose outcome broke the contract
/// (issues outside the file, an empty message, an unbounded key in a message).
public struct ConfigFuzzSummary {
    public var cases = 0
    public var bytes = 0
    public var loaded = 0
    public var refusedByLimits = 0
    public var slowest: (duration: Duration, index: Int, bytes: Int) = (.zero, 0, 0)
    public var total: Duration = .zero
    public var violations: [String] = []

    public var description: String {
        "\(cases) cases, \(bytes / 1_048_576) MiB in \(total); \(loaded) loaded, \(refusedByLimits) refused by the input limits; "
            + "slowest case #\(slowest.index) (\(slowest.bytes) bytes): \(slowest.duration)"
    }
}

/// Runs `cases` generated documents through the whole configuration parse. A crash or a
/// hang is the failure this exists to find; the summary reports everything else.
/// Documents larger than `maximumCaseBytes` are generated but not parsed (a debug build's
/// quick run leaves the largest to the release run and to dedicated tests).
public func runConfigFuzz(cases: Int, seed: UInt64, maximumCaseBytes: Int = .max,
                          progress: ((Int) -> Void)? = nil) -> ConfigFuzzSummary {
    let file = "/etc/beacon-gateway/gateway.toml"
    let limitMessages = ["key has more", "arrays and inline", "array has more", "line is"]
    var generator = StructuralTOMLGenerator(seed: seed)
    var summary = ConfigFuzzSummary()
    let clock = ContinuousClock()
    let started = clock.now
    for index in 0 ..< cases {
        if let progress, index > 0, index % 100_000 == 0 { progress(index) }
        let text = generator.next()
        guard text.utf8.count <= maximumCaseBytes else { continue }
        summary.cases += 1
        summary.bytes += text.utf8.count
        let lineCount = text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let elapsed = clock.measure {
            do throws(ConfigurationError) {
                _ = try GatewayConfiguration.parse(text: text, file: file, fileSystem: NoFiles())
                summary.loaded += 1
            } catch {
                if error.issues.isEmpty { summary.violations.append("case \(index): no issues") }
                for issue in error.issues {
                    if !(0 ... lineCount).contains(issue.line) || issue.key.utf8.count > 256 || issue.message.isEmpty {
                        summary.violations.append("case \(index): \(issue.description.prefix(300))")
                    }
                    if limitMessages.contains(where: issue.message.hasPrefix) { summary.refusedByLimits += 1 }
                }
            }
        }
        if elapsed > summary.slowest.duration { summary.slowest = (elapsed, index, text.utf8.count) }
    }
    summary.total = clock.now - started
    return summary
}

/// Generated files name no secret files: every read fails.
private struct NoFiles: ConfigurationFileSystem {
    func read(_ path: String, limit: Int) throws(FileAccessError) -> FileSnapshot { throw .notFound }
}
