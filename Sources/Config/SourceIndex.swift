/// The line of every table header and `key =` of a TOML document, from ``TOMLParser``.
///
/// Built only for a file with problems to report (``Diagnostics``): a valid file is
/// parsed without them, since it would hold a path for every key of every person only
/// to say nothing (the peak memory target, docs/benchmarks.md).
struct SourceIndex: Sendable {
    private let lines: [ConfigPath: Int]

    init(text: String) {
        lines = TOMLParser.lines(of: text)
    }

    /// The line where `path` is written, else where its nearest written ancestor is (a
    /// missing key of a table), else 0.
    func line(of path: ConfigPath) -> Int {
        var current: ConfigPath? = path
        while let candidate = current {
            if let line = lines[candidate] { return line }
            current = candidate.parent
        }
        return 0
    }
}
