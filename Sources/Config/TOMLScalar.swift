/// The unquoted values of TOML 1.0: booleans, integers (decimal, `0x`, `0o`, `0b`),
/// floats (`inf`, `nan`), and dates and times, which this configuration never uses: they
/// are checked and arrive as ``ConfigValue/other(typeName:)``, so a key given one is
/// refused by the key's own check with its line ("must be a string, got date").
enum TOMLScalar {
    struct Problem: Error {
        var message: String
    }

    /// The bytes a bare value may hold; a value ends at the first other byte.
    static func isValueByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
             UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"),
             UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: ":"): true
        default: false
        }
    }

    private static let words: [(String, ConfigValue)] = [
        ("true", .boolean(true)), ("false", .boolean(false)), ("inf", .float(.infinity)), ("+inf", .float(.infinity)),
        ("-inf", .float(-.infinity)), ("nan", .float(.nan)), ("+nan", .float(.nan)), ("-nan", .float(.nan)),
    ]

    static func value(_ token: [UInt8]) throws(Problem) -> ConfigValue {
        if token.count <= 5, let word = words.first(where: { token.elementsEqual($0.0.utf8) }) { return word.1 }
        if let kind = try dateOrTime(token) { return .other(typeName: kind) }
        if token.count > 2, token[0] == UInt8(ascii: "0"), let radix = radix(token[1]) {
            return .integer(try integer(token[2...], radix: radix))
        }
        var digits = token[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard let first = digits.first, isDigit(first) else { throw invalid(token) }
        let integerPart = digits.prefix { isDigit($0) || $0 == UInt8(ascii: "_") }
        if integerPart.count > 1, first == UInt8(ascii: "0") {
            throw Problem(message: "\(show(token)): a number cannot start with 0 (write 0x, 0o or 0b for other bases)")
        }
        if integerPart.count == digits.count {
            let magnitude = try integer(integerPart, radix: 10, allowingMinimum: negative)
            return .integer(negative ? 0 &- magnitude : magnitude)
        }
        return .float(try float(token, integerPart: integerPart, rest: digits[integerPart.endIndex...]))
    }

    private static func radix(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "x"): 16
        case UInt8(ascii: "o"): 8
        case UInt8(ascii: "b"): 2
        default: nil
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Digits of `radix` with single underscores between them. With `allowingMinimum` the
    /// magnitude may be 2^63 (returned wrapped: the caller negates it to `Int.min`).
    private static func integer(_ digits: ArraySlice<UInt8>, radix: Int, allowingMinimum: Bool = false) throws(Problem) -> Int {
        try checkUnderscores(digits)
        var value: UInt64 = 0
        for byte in digits where byte != UInt8(ascii: "_") {
            guard let digit = TOMLScanner.hexValue(byte), Int(digit) < radix else {
                throw Problem(message: "\(show(digits)) is not a base-\(radix) integer")
            }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: UInt64(radix))
            let (sum, carry) = shifted.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { throw tooLarge(digits) }
            value = sum
        }
        let limit = UInt64(Int.max) + (allowingMinimum ? 1 : 0)
        guard value <= limit else { throw tooLarge(digits) }
        return Int(truncatingIfNeeded: value)
    }

    private static func tooLarge(_ digits: ArraySlice<UInt8>) -> Problem {
        Problem(message: "\(show(digits)) does not fit in a 64-bit integer")
    }

    /// Underscores only between two digits.
    private static func checkUnderscores(_ digits: ArraySlice<UInt8>) throws(Problem) {
        guard !digits.isEmpty else { throw Problem(message: "a number needs digits") }
        var previous: UInt8?
        for byte in digits {
            if byte == UInt8(ascii: "_"), previous == nil || previous == UInt8(ascii: "_") {
                throw Problem(message: "\(show(digits)): '_' must stand between two digits")
            }
            previous = byte
        }
        if previous == UInt8(ascii: "_") { throw Problem(message: "\(show(digits)): '_' must stand between two digits") }
    }

    /// `1.5`, `1e6`, `-2.5E-3`: a fraction, an exponent or both after the integer part.
    private static func float(_ token: [UInt8], integerPart: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) throws(Problem) -> Double {
        var rest = rest
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let fraction = rest.prefix { isDigit($0) || $0 == UInt8(ascii: "_") }
            guard fraction.first.map(isDigit) == true else { throw Problem(message: "\(show(token)): a '.' needs digits on both sides") }
            try checkUnderscores(fraction)
            rest = rest[fraction.endIndex...]
        }
        if let e = rest.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { rest = rest.dropFirst() }
            let exponent = rest.prefix { isDigit($0) || $0 == UInt8(ascii: "_") }
            guard exponent.first.map(isDigit) == true else { throw invalid(token) }
            try checkUnderscores(exponent)
            rest = rest[exponent.endIndex...]
        }
        try checkUnderscores(integerPart)
        guard rest.isEmpty, let value = Double(String(decoding: token.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)) else {
            throw invalid(token)
        }
        return value
    }

    // MARK: Dates and times

    /// "date-time", "date" or "time" when the token is one (checked), nil when it does not
    /// look like one at all.
    static func dateOrTime(_ token: [UInt8]) throws(Problem) -> String? {
        let looksLikeDate = token.count >= 10 && token[4] == UInt8(ascii: "-") && token[0 ..< 4].allSatisfy(isDigit)
        let looksLikeTime = token.count >= 3 && token[2] == UInt8(ascii: ":") && token[0 ..< 2].allSatisfy(isDigit)
        guard looksLikeDate || looksLikeTime else { return nil }
        let problem = Problem(message: "\(show(token)) is not a valid TOML date or time (and dates and times are not used in this configuration)")
        var rest = token[...]
        if looksLikeTime {
            guard time(&rest), rest.isEmpty else { throw problem }
            return "time"
        }
        guard date(&rest) else { throw problem }
        if rest.isEmpty { return "date" }
        guard let separator = rest.first, separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " ") else {
            throw problem
        }
        rest = rest.dropFirst()
        guard time(&rest) else { throw problem }
        if let zone = rest.first {
            if zone == UInt8(ascii: "Z") || zone == UInt8(ascii: "z") {
                rest = rest.dropFirst()
            } else if zone == UInt8(ascii: "+") || zone == UInt8(ascii: "-") {
                rest = rest.dropFirst()
                guard let hour = number(&rest, digits: 2), hour < 24, rest.first == UInt8(ascii: ":") else { throw problem }
                rest = rest.dropFirst()
                guard let minute = number(&rest, digits: 2), minute < 60 else { throw problem }
            }
        }
        guard rest.isEmpty else { throw problem }
        return "date-time"
    }

    private static func number(_ text: inout ArraySlice<UInt8>, digits: Int) -> Int? {
        guard text.count >= digits, text.prefix(digits).allSatisfy(isDigit) else { return nil }
        let value = text.prefix(digits).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        text = text.dropFirst(digits)
        return value
    }

    private static func date(_ text: inout ArraySlice<UInt8>) -> Bool {
        guard let year = number(&text, digits: 4), text.first == UInt8(ascii: "-") else { return false }
        text = text.dropFirst()
        guard let month = number(&text, digits: 2), (1 ... 12).contains(month), text.first == UInt8(ascii: "-") else { return false }
        text = text.dropFirst()
        guard let day = number(&text, digits: 2) else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1 ... days).contains(day)
    }

    private static func time(_ text: inout ArraySlice<UInt8>) -> Bool {
        guard let hour = number(&text, digits: 2), hour < 24, text.first == UInt8(ascii: ":") else { return false }
        text = text.dropFirst()
        guard let minute = number(&text, digits: 2), minute < 60, text.first == UInt8(ascii: ":") else { return false }
        text = text.dropFirst()
        guard let second = number(&text, digits: 2), second <= 60 else { return false }
        if text.first == UInt8(ascii: ".") {
            text = text.dropFirst()
            let fraction = text.prefix(while: isDigit)
            guard !fraction.isEmpty else { return false }
            text = text[fraction.endIndex...]
        }
        return true
    }

    private static func invalid(_ token: [UInt8]) -> Problem {
        Problem(message: "\(show(token)) is not a TOML value (strings need quotes; numbers, true, false, inf and nan do not)")
    }

    /// The token for a message, bounded and escaped.
    private static func show(_ token: some Collection<UInt8>) -> String {
        quoted(String(decoding: token, as: UTF8.self))
    }
}
