public import Foundation

/// The periods a time sheet adds up over, split at local midnight in a time zone.
public enum SummaryPeriod: String, Sendable, CaseIterable {
    case day, week, month

    /// The local calendar the periods are cut in: ISO 8601 weeks (Monday first, week 1 holding
    /// the year's first Thursday).
    public static func calendar(in zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = zone
        return calendar
    }

    /// The period holding `time`: its start and the next period's start (seconds since 1970),
    /// and its label (`2026-11-26`, `2026-W48`, `2026-11`). A day is as long as the zone makes
    /// it (23 or 25 hours on the days clocks change).
    public func period(containing time: Double, calendar: Calendar) -> (start: Double, end: Double, label: String) {
        let date = Date(timeIntervalSince1970: time)
        let component: Calendar.Component
        switch self {
        case .day: component = .day
        case .week: component = .weekOfYear
        case .month: component = .month
        }
        guard let interval = calendar.dateInterval(of: component, for: date) else {
            // A calendar always has these; a day of the time's own is the least wrong answer.
            let day = (time / 86400).rounded(.down) * 86400
            return (day, day + 86400, String(Timestamp.format(seconds: day).prefix(10)))
        }
        let start = interval.start
        let parts = calendar.dateComponents([.year, .month, .day, .weekOfYear, .yearForWeekOfYear], from: start)
        let label: String
        switch self {
        case .day:
            label = Self.digits(parts.year, 4) + "-" + Self.digits(parts.month, 2) + "-" + Self.digits(parts.day, 2)
        case .week: label = Self.digits(parts.yearForWeekOfYear, 4) + "-W" + Self.digits(parts.weekOfYear, 2)
        case .month: label = Self.digits(parts.year, 4) + "-" + Self.digits(parts.month, 2)
        }
        return (start.timeIntervalSince1970, interval.end.timeIntervalSince1970, label)
    }

    private static func digits(_ value: Int?, _ width: Int) -> String {
        let text = String(value ?? 0)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
