import FencepostCore

/// A date as Apple Health exports write it, `2023-01-14 07:35:00 -0500`: an instant and the UTC
/// offset it was recorded in, which decides its local day.
package struct HealthDate: Sendable, Hashable, Comparable {
    /// Seconds since the epoch.
    package var seconds: Double
    /// The recording's UTC offset, in seconds east of UTC.
    package var offset: Int

    package init(seconds: Double, offset: Int) {
        self.seconds = seconds
        self.offset = offset
    }

    /// Parses `YYYY-MM-DD HH:MM:SS ±HHMM`; nil for anything else.
    package init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 25, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20,
            b[20] == 0x2B || b[20] == 0x2D
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (0x30...0x39).contains(b[index]) else { return nil }
                value = value * 10 + Int(b[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let offsetHours = number(21..<23), let offsetMinutes = number(23..<25),
            (1...12).contains(month), (1...Timestamp.daysIn(month: month, year: year)).contains(day), hour < 24,
            minute < 60, second < 61,
            offsetHours < 24, offsetMinutes < 60
        else { return nil }
        let offset = (b[20] == 0x2D ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
        let days = Timestamp.daysSinceEpoch(year: year, month: month, day: day)
        self.offset = offset
        self.seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
    }

    package static func < (a: HealthDate, b: HealthDate) -> Bool { a.seconds < b.seconds }

    /// Days since 1970-01-01 of the recording's local date.
    package var localDay: Int { Int(((seconds + Double(offset)) / 86_400).rounded(.down)) }

    /// The recording's local date, `2023-01-14`.
    package var localDate: String { Self.dateText(day: localDay) }

    /// `-05:00` style.
    package var offsetText: String {
        let minutes = abs(offset) / 60
        let sign = offset < 0 ? "-" : "+"
        return sign + (minutes / 60 < 10 ? "0" : "") + "\(minutes / 60):" + (minutes % 60 < 10 ? "0" : "")
            + "\(minutes % 60)"
    }

    /// `2023-01-14` for a count of days since 1970-01-01.
    package static func dateText(day: Int) -> String {
        String(Timestamp.format(milliseconds: Int64(day) * 86_400_000).prefix(10))
    }
}
