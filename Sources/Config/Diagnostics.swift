/// Collects every issue of one validation pass, with its line.
///
/// A class because every table reader of the pass reports into it; it never leaves the
/// pass (internal, not Sendable).
final class Diagnostics {
    let file: String
    private let text: String
    /// How the document names keys and counts elements.
    let dialect: DocumentDialect
    /// Where every key is written: built on the first issue only. A valid file would
    /// otherwise hold a path for every key of every person only to say nothing
    /// (the peak RSS target: docs/benchmarks.md).
    private lazy var index = SourceIndex(text: text)
    private var issues: [ConfigIssue] = []

    init(file: String, text: String, dialect: DocumentDialect = .toml) {
        self.file = file
        self.text = text
        self.dialect = dialect
    }

    /// The name under which the document holds `key` (the configuration's own name).
    func documentKey(_ key: String) -> String {
        dialect.documentKey(key)
    }

    /// `person[2].tag[1].ibeacon` in TOML, `persons[1].tags[0].ibeacon` in JSON.
    func describe(_ path: ConfigPath) -> String {
        dialect.describe(path)
    }

    var isEmpty: Bool { issues.isEmpty }

    /// Issues kept from one file: enough to fix a real one, and a bound on the work and
    /// the output a file of 30,000 unknown tables would otherwise cause.
    static let maximumIssues = 100

    /// No more issues are kept; callers skip work whose only use is an issue.
    var isFull: Bool { issues.count >= Self.maximumIssues }

    func report(_ path: ConfigPath, _ message: String) {
        guard !isFull else {
            omitted += 1
            return
        }
        let line = dialect == .toml ? index.line(of: path) : 0
        issues.append(ConfigIssue(file: file, line: line, key: describe(path), message: message))
    }

    /// Problems found past ``maximumIssues``: counted, not described.
    private(set) var omitted = 0

    /// By line; issues on one line keep the order in which they were found. When some were
    /// left out, a last line says how many.
    var sortedIssues: [ConfigIssue] {
        let sorted = issues.enumerated()
            .sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            .map(\.element)
        guard omitted > 0 else { return sorted }
        return sorted + [ConfigIssue(file: file, line: 0, key: "", message: "\(omitted) more problems not listed; fix these first")]
    }
}

/// How a validated document spells keys and counts array elements. `[[person]]` tables
/// and a server roster's `persons` (see docs/fleet.md) go through the same checks; only
/// the names in the messages differ.
enum DocumentDialect: Hashable, Sendable {
    /// The configuration file: snake_case keys, elements counted from 1, issues with lines.
    case toml
    /// A JSON document: camelCase keys, plural array names, elements counted from 0.
    case json

    /// The name under which a document of this dialect holds the configuration's `key`:
    /// a JSON document spells a few differently. A switch, not a dictionary: every key a
    /// table reader asks for passes here, and comparing short strings costs less than
    /// hashing them.
    func documentKey(_ key: String) -> String {
        guard self == .json else { return key }
        switch key {
        case "person": return "persons"
        case "tag": return "tags"
        case "require_proof": return "requireProof"
        case "eddystone_uid": return "eddystoneUid"
        default: return key
        }
    }

    func describe(_ path: ConfigPath) -> String {
        guard self == .json else { return path.description }
        var text = ""
        for component in path.components {
            switch component {
            case let .key(key), let .literal(key):
                if !text.isEmpty { text += "." }
                let name: String
                if case .key = component { name = documentKey(key) } else { name = key }
                text += ConfigPath.isBare(name) && name.utf8.count <= 64 ? name : quoted(name)
            case let .element(ordinal):
                text += "[\(ordinal - 1)]"
            }
        }
        return text
    }
}

/// Untrusted text quoted for a message: bounded length, control characters escaped.
func quoted(_ text: String) -> String {
    var result = "\""
    var count = 0
    for scalar in text.unicodeScalars {
        if count == 64 {
            result += "…"
            break
        }
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80 ..< 0xA0).contains(scalar.value):
            result += "\\u{\(String(scalar.value, radix: 16))}"
        default: result.unicodeScalars.append(scalar)
        }
        count += 1
    }
    return result + "\""
}

/// Levenshtein distance, for "did you mean" suggestions between short keys.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0 ... b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1 ... a.count {
        current[0] = i
        for j in 1 ... b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// The known key closest to an unknown one, if it is close enough to be a typo.
func suggestion(for unknown: String, among known: [String]) -> String? {
    // Long keys from a file are not typos of short ones; skip the quadratic work.
    guard unknown.unicodeScalars.count <= 64 else { return nil }
    let lowered = unknown.lowercased()
    var best: (key: String, distance: Int)?
    for candidate in known {
        let distance = lowered == candidate ? 0 : editDistance(lowered, candidate)
        let allowed = max(1, min(3, candidate.count / 3))
        if distance <= allowed, distance < (best?.distance ?? Int.max) {
            best = (candidate, distance)
        }
    }
    return best?.key
}
