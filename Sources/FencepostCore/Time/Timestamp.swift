public import Foundation

/// RFC 3339 times in UTC with milliseconds, such as `2025-06-01T06:04:52.350Z`: the one format
/// Fencepost stores and exports.
public enum Timestamp {
    /// Formats a date, rounding to the nearest millisecond.
    public static func format(_ date: Date) -> String {
        format(milliseconds: milliseconds(date.timeIntervalSince1970))
    }

    /// Formats milliseconds since the Unix epoch; past ±8.64e15 (±273,790 years), the bound.
    public static func format(milliseconds: Int64) -> String {
        let bound = Int64(maximumMilliseconds)
        let milliseconds = min(max(milliseconds, -bound), bound)
        let days = milliseconds.floorDivided(by: 86_400_000)
        let msOfDay = milliseconds - days * 86_400_000
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let millisecond = msOfDay % 1000
        guard (0...9999).contains(year) else {
            return
                "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
        }
        // The usual case, written straight into the string's 24 bytes: ingest formats several
        // times per event.
        return String(unsafeUninitializedCapacity: 24) { bytes in
            var at = 0
            func put(_ value: Int64, _ width: Int) {
                var rest = value
                for position in stride(from: at + width - 1, through: at, by: -1) {
                    bytes[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                at += width
            }
            func put(_ separator: Unicode.Scalar) {
                bytes[at] = UInt8(ascii: separator)
                at += 1
            }
            put(year, 4)
            put("-")
            put(month, 2)
            put("-")
            put(day, 2)
            put("T")
            put(hour, 2)
            put(":")
            put(minute, 2)
            put(":")
            put(second, 2)
            put(".")
            put(millisecond, 3)
            put("Z")
            return at
        }
    }

    /// Year, month and day of a day count since 1970-01-01 (proleptic Gregorian calendar).
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        // Howard Hinnant's days-to-civil algorithm, in 400-year eras.
        let z = daysSinceEpoch + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

extension Int64 {
    /// Division rounding toward negative infinity, so times before 1970 format correctly.
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
