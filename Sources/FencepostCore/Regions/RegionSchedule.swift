/// When a region is active: weekly periods of local time in an IANA zone, with dates left out.
/// Outside its periods a region is inactive (``ScheduleClock`` turns the periods into instants).
public struct RegionSchedule: Sendable, Hashable {
    /// One weekly rule: on each of `days`, from `from` to `to` local time.
    public struct Weekly: Sendable, Hashable {
        /// In week order, each once.
        public var days: [Weekday]
        /// Minutes after local midnight, 0 ..< 1440.
        public var from: Int
        /// Minutes after local midnight, 1 ... 1440 (`24:00`); at or before `from`, the period
        /// ends on the next day.
        public var to: Int

        public init(days: [Weekday], from: Int, to: Int) {
            self.days = Array(Set(days)).sorted { $0.rawValue < $1.rawValue }
            self.from = from
            self.to = to
        }

        /// The period's length in minutes.
        public var minutes: Int { to > from ? to - from : to + 1440 - from }
    }

    /// The IANA zone the local times are in.
    public var timeZone: String
    public var weekly: [Weekly]
    /// Local dates on which no period starts, ascending, each once.
    public var except: [LocalDate]

    public init(timeZone: String, weekly: [Weekly], except: [LocalDate] = []) {
        self.timeZone = timeZone
        self.weekly = weekly
        self.except = Array(Set(except)).sorted()
    }

    /// The schedule as region configs write it, in canonical form (days in week order, times as
    /// `HH:MM`, excepted dates ascending; `except` left out when empty).
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "tz": .string(timeZone),
            "weekly": .array(
                weekly.map {
                    .object([
                        "days": .array($0.days.map { .string($0.name) }),
                        "from": .string(Self.clock($0.from)), "to": .string(Self.clock($0.to)),
                    ])
                }),
        ]
        if !except.isEmpty { members["except"] = .array(except.map { .string($0.description) }) }
        return .object(members)
    }

    /// `HH:MM` for minutes after midnight.
    static func clock(_ minutes: Int) -> String {
        let hours = minutes / 60
        let rest = minutes % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }

    /// Minutes after midnight of `HH:MM` (`24:00` allowed when `endOfDay`), or nil.
    static func minutes(_ text: String, endOfDay: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hours = Int(parts[0]),
            let minutes = Int(parts[1]), (0...59).contains(minutes)
        else { return nil }
        if hours == 24, minutes == 0, endOfDay { return 1440 }
        guard (0...23).contains(hours) else { return nil }
        return hours * 60 + minutes
    }
}

/// A day of the week, Monday first.
public enum Weekday: Int, Sendable, Hashable, CaseIterable {
    case monday, tuesday, wednesday, thursday, friday, saturday, sunday

    /// The two-letter name configs use: `mo`, `tu`, ... `su`.
    public var name: String { ["mo", "tu", "we", "th", "fr", "sa", "su"][rawValue] }

    public init?(name: String) {
        guard let day = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = day
    }
}

/// A calendar date with no zone: days since 1970-01-01 (proleptic Gregorian).
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var day: Int

    public init(day: Int) {
        self.day = day
    }

    /// `YYYY-MM-DD`, or nil when it is no date.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month),
            (1...Timestamp.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.day = Timestamp.daysSinceEpoch(year: year, month: month, day: day)
    }

    public var weekday: Weekday {
        // 1970-01-01 was a Thursday.
        Weekday.allCases[((day + 3) % 7 + 7) % 7]
    }

    public var description: String {
        let (year, month, day) = Timestamp.civilDate(daysSinceEpoch: Int64(self.day))
        func two(_ value: Int64) -> String { (value < 10 ? "0" : "") + String(value) }
        return String(year) + "-" + two(month) + "-" + two(day)
    }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { a.day < b.day }
}
