/// UTC timestamps as the server expects them: `2026-11-20T06:35:12.345Z`.
///
/// Written by hand (Howard Hinnant's `civil_from_days`) so that the event model needs no
/// Foundation; proleptic Gregorian calendar, any year from −9999 to 9999 formats, later
/// years print with more digits.
public enum ISO8601Timestamp {
    static let millisecondsPerDay: Int64 = 86_400_000

    /// `milliseconds` since 1970-01-01T00:00:00.000Z, negative before it.
    public static func format(millisecondsSinceEpoch milliseconds: Int64) -> String {
        // Floor division, so that times before the epoch land on the previous day.
        var days = milliseconds / millisecondsPerDay
        var msOfDay = milliseconds % millisecondsPerDay
        if msOfDay < 0 {
            msOfDay += millisecondsPerDay
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60000 % 60
        let second = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        var text = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        text += "-" + pad(month, 2) + "-" + pad(day, 2)
        text += "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + "." + pad(ms, 3) + "Z"
        return text
    }

    /// Year, month (1…12), day (1…31) of a day count since 1970-01-01.
    /// http://howardhinnant.github.io/date_algorithms.html#civil_from_days
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        // Clamped far beyond any real timestamp, so the arithmetic below cannot overflow.
        let z = min(max(days, -1_000_000_000_000), 1_000_000_000_000) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097 // [0, 146096]
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365 // [0, 399]
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100) // [0, 365]
        let mp = (5 * dayOfYear + 2) / 153 // [0, 11], March-based
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
