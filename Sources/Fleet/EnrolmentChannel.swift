/// The status socket's one long exchange: `beacon-gateway enroll` asking the running agent
/// to open an enrolment window (SPEC §15), in lines (docs/fleet.md, "Enrolment through the
/// status socket"). Text only, one line per message, so that what the command shows is
/// what the agent said: the agent's progress, the six digits to compare, the outcome.
///
/// The client sends one request line; the agent answers with lines until the outcome
/// (`enrolled` or `failed`) and closes. While a value is being compared the client sends
/// `yes` or `no`. A client that hangs up ends the window.
public enum EnrolmentChannel {
    public struct Request: Hashable, Sendable {
        public var personId: String
        public var tagId: String
        public var seconds: Int
        /// Numeric Comparison (the command has a terminal and no `--yes`); else Just Works.
        public var comparesDigits: Bool

        public init(personId: String, tagId: String, seconds: Int, comparesDigits: Bool) {
            self.personId = personId
            self.tagId = tagId
            self.seconds = seconds
            self.comparesDigits = comparesDigits
        }
    }

    /// What a phone that paired handed over, as the command prints it.
    public struct Enrolled: Hashable, Sendable {
        /// `just-works` or `numeric-comparison`.
        public var pairing: String
        public var identityAddress: String
        public var identityAddressIsRandom: Bool
        /// 32 hex digits, most significant first; nil when the phone gave only an address.
        public var irk: String?

        public init(pairing: String, identityAddress: String, identityAddressIsRandom: Bool, irk: String?) {
            self.pairing = pairing
            self.identityAddress = identityAddress
            self.identityAddressIsRandom = identityAddressIsRandom
            self.irk = irk
        }
    }

    /// From the agent to the command.
    public enum Message: Hashable, Sendable {
        /// A line for the installer's screen.
        case progress(String)
        /// Show these six digits and answer `yes` or `no`.
        case compare(UInt32)
        case enrolled(Enrolled)
        /// The window ended without a phone enrolled, or could not open: why, in words.
        case failed(String)
    }

    /// The request's longest line: two ids of at most 64 bytes and the rest.
    public static let maxRequestBytes = 192
    /// An answer line (`yes`/`no`) is short; anything longer ends the exchange.
    public static let maxAnswerBytes = 16
    /// Longest window a request may ask for, as the command's `--seconds`.
    public static let secondsRange = 1 ... 3600

    static let requestWord = "enroll"
    static let compareWord = "compare"
    static let justWorksWord = "just-works"

    // MARK: Request

    public static func line(_ request: Request) -> [UInt8] {
        Array("\(requestWord) \(request.personId) \(request.tagId) \(request.seconds) \(request.comparesDigits ? compareWord : justWorksWord)\n".utf8)
    }

    /// Whether the head (a whole line) is an enrolment request at all: its first word.
    public static func isRequest(head: [UInt8]) -> Bool {
        head.starts(with: Array((requestWord + " ").utf8))
    }

    /// The request, or nil when the line is not one well-formed request. The ids are
    /// checked by the caller against the configuration's rules.
    public static func request(head: [UInt8]) -> Request? {
        let words = text(of: head).split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 5, words[0] == requestWord, !words[1].isEmpty, !words[2].isEmpty,
              let seconds = Int(words[3]), secondsRange.contains(seconds),
              words[4] == compareWord || words[4] == justWorksWord else { return nil }
        return Request(personId: String(words[1]), tagId: String(words[2]), seconds: seconds,
                       comparesDigits: words[4] == compareWord)
    }

    // MARK: Agent to command

    public static func line(_ message: Message) -> [UInt8] {
        let text = switch message {
        case .progress(let words): "progress " + oneLine(words)
        case .compare(let value): "\(compareWord) \(value)"
        case .enrolled(let phone):
            "enrolled \(phone.pairing) \(phone.identityAddress) \(phone.identityAddressIsRandom ? "random" : "public") \(phone.irk ?? "-")"
        case .failed(let words): "failed " + oneLine(words)
        }
        return Array((text + "\n").utf8)
    }

    /// One line from the agent (its newline removed), or nil for a line that is none of
    /// the messages.
    public static func message(_ line: [UInt8]) -> Message? {
        let whole = text(of: line)
        guard let space = whole.firstIndex(of: " ") else { return nil }
        let word = whole[..<space]
        let rest = String(whole[whole.index(after: space)...])
        switch word {
        case "progress": return .progress(rest)
        case "failed": return .failed(rest)
        case Substring(compareWord):
            guard let value = UInt32(rest), value <= 999_999 else { return nil }
            return .compare(value)
        case "enrolled":
            let fields = rest.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 4, !fields[0].isEmpty, !fields[1].isEmpty,
                  fields[2] == "random" || fields[2] == "public", !fields[3].isEmpty else { return nil }
            return .enrolled(Enrolled(pairing: String(fields[0]), identityAddress: String(fields[1]),
                                      identityAddressIsRandom: fields[2] == "random",
                                      irk: fields[3] == "-" ? nil : String(fields[3])))
        default:
            return nil
        }
    }

    // MARK: Command to agent

    public static func answerLine(matches: Bool) -> [UInt8] {
        Array((matches ? "yes\n" : "no\n").utf8)
    }

    /// `yes` or `no` (a line without its newline); nil for anything else.
    public static func answer(_ line: [UInt8]) -> Bool? {
        switch text(of: line) {
        case "yes": true
        case "no": false
        default: nil
        }
    }

    // MARK: Text

    /// A line's text without its newline (and a carriage return before it).
    static func text(of line: [UInt8]) -> String {
        var bytes = line[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Free text on one line: line breaks become spaces.
    static func oneLine(_ words: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in words.unicodeScalars {
            scalars.append(scalar == "\n" || scalar == "\r" ? " " : scalar)
        }
        return String(scalars)
    }
}
