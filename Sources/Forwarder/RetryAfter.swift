/// The `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// The wait the header asks for, from `nowMillis` (wall clock, Unix epoch), never
    /// negative; `nil` when the value is neither form (it is then ignored).
    ///
    /// The caller caps it at `max_backoff_s`: a server cannot park events for a year.
    public static func delay(_ value: String, nowMillis: Int64) -> Duration? {
        let trimmed = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }
        let text = Array(trimmed.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed())
        guard !text.isEmpty, text.count <= 64 else { return nil }
        if text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // More than 9 digits is more than 31 years: clamp instead of overflowing.
            guard text.count <= 9 else { return .seconds(999_999_999) }
            let seconds = text.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
            return .seconds(seconds)
        }
        guard let epochSeconds = HTTPDate.parse(String(decoding: text, as: UTF8.self)) else { return nil }
        let millis = epochSeconds * 1_000 - nowMillis
        return .milliseconds(max(0, millis))
    }
}

/// HTTP-dates in the three forms RFC 9110 §5.6.7 says a recipient must accept.
public enum HTTPDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since the Unix epoch, or `nil` if `text` is not an HTTP-date.
    ///
    /// - `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate, the one servers send)
    /// - `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete RFC 850)
    /// - `Sun Nov  6 08:49:37 1994` (asctime)
    public static func parse(_ text: String) -> Int64? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var day: Int64, month: Int64, year: Int64, time: String
        if fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT" {
            guard let d = number(fields[1], digits: 1 ... 2), let m = monthNumber(fields[2]),
                  let y = number(fields[3], digits: 4 ... 4) else { return nil }
            (day, month, year, time) = (d, m, y, fields[4])
        } else if fields.count == 4, fields[0].hasSuffix(","), fields[3] == "GMT" {
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let d = number(parts[0], digits: 1 ... 2), let m = monthNumber(parts[1]),
                  let y = number(parts[2], digits: 2 ... 2) else { return nil }
            // RFC 9110: a two-digit year more than 50 years ahead is in the past century.
            (day, month, year, time) = (d, m, y < 70 ? 2000 + y : 1900 + y, fields[2])
        } else if fields.count == 5 {
            guard let m = monthNumber(fields[1]), let d = number(fields[2], digits: 1 ... 2),
                  let y = number(fields[4], digits: 4 ... 4) else { return nil }
            (day, month, year, time) = (d, m, y, fields[3])
        } else {
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard clock.count == 3, let hour = number(clock[0], digits: 2 ... 2), let minute = number(clock[1], digits: 2 ... 2),
              let second = number(clock[2], digits: 2 ... 2), hour < 24, minute < 60, second < 61,
              day >= 1, day <= daysInMonth(month, year: year) else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    private static func number(_ text: String, digits: ClosedRange<Int>) -> Int64? {
        let utf8 = Array(text.utf8)
        guard digits.contains(utf8.count), utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return utf8.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }

    private static func monthNumber(_ text: String) -> Int64? {
        months.firstIndex(of: text).map { Int64($0 + 1) }
    }

    private static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
