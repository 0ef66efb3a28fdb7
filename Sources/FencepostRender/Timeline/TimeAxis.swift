import FencepostCore
import Foundation

/// Ticks for a time axis in UTC, on calendar boundaries: whole minutes and hours, midnights,
/// Mondays, the first of a month or quarter, the first of January; the step from a fixed ladder
/// giving about `target` ticks, each labelled as much as its step needs.
struct TimeAxis {
    let start: Double
    let end: Double
    let step: Step

    /// A step of the ladder: a count of a calendar unit.
    struct Step: Equatable {
        enum Unit { case minute, hour, day, week, month, year }
        var unit: Unit
        var count: Int

        /// Its length in seconds (months and years at their average), for choosing.
        var seconds: Double {
            switch unit {
            case .minute: Double(count) * 60
            case .hour: Double(count) * 3_600
            case .day: Double(count) * 86_400
            case .week: Double(count) * 7 * 86_400
            case .month: Double(count) * 30.44 * 86_400
            case .year: Double(count) * 365.25 * 86_400
            }
        }
    }

    static let ladder: [Step] = [
        Step(unit: .minute, count: 1), Step(unit: .minute, count: 5), Step(unit: .minute, count: 15),
        Step(unit: .minute, count: 30), Step(unit: .hour, count: 1), Step(unit: .hour, count: 3),
        Step(unit: .hour, count: 6), Step(unit: .hour, count: 12), Step(unit: .day, count: 1),
        Step(unit: .day, count: 2), Step(unit: .week, count: 1), Step(unit: .week, count: 2),
        Step(unit: .month, count: 1), Step(unit: .month, count: 3), Step(unit: .month, count: 6),
        Step(unit: .year, count: 1), Step(unit: .year, count: 2), Step(unit: .year, count: 5),
        Step(unit: .year, count: 10), Step(unit: .year, count: 50), Step(unit: .year, count: 100),
    ]

    init(start: Double, end: Double, target: Int) {
        self.start = start
        self.end = end
        let span = max(end - start, 60)
        step = Self.ladder.first { span / $0.seconds <= Double(target) } ?? Self.ladder.last!
    }

    /// Tick times within the axis (at most 500), on the step's calendar boundaries in UTC.
    var ticks: [Double] {
        var ticks: [Double] = []
        var tick = firstTick()
        while tick <= end, ticks.count < 500 {
            if tick >= start { ticks.append(tick) }
            guard let next = advance(tick), next > tick else { break }
            tick = next
        }
        return ticks
    }

    /// `07:45`, `18 Feb 06:00`, `18 Feb`, `Feb 2019`, `2019`: a tick's label at this step.
    func label(_ time: Double) -> String {
        let (year, month, day, hour, minute) = Self.parts(time)
        let monthName = Self.monthNames[month - 1]
        switch step.unit {
        case .minute, .hour:
            let clock = Self.two(hour) + ":" + Self.two(minute)
            return hour == 0 && minute == 0 ? "\(day) \(monthName)" : clock
        case .day, .week:
            return month == 1 && day == 1 ? "\(year)" : "\(day) \(monthName)"
        case .month:
            return month == 1 ? "\(year)" : "\(monthName) \(year)"
        case .year:
            return "\(year)"
        }
    }

    // MARK: - Calendar

    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Year, month, day, hour and minute of a time in UTC.
    static func parts(_ time: Double) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int) {
        let text = Timestamp.format(seconds: time)  // 2019-02-18T07:45:00.000Z
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int {
            bytes[from..<(from + count)].reduce(0) { $0 * 10 + Int($1) - 48 }
        }
        guard bytes.count >= 16, bytes[4] == 0x2D else { return (1970, 1, 1, 0, 0) }  // past year 9999
        return (number(0, 4), number(5, 2), number(8, 2), number(11, 2), number(14, 2))
    }

    private static func time(year: Int, month: Int, day: Int = 1) -> Double {
        Double(Timestamp.daysSinceEpoch(year: year, month: month, day: day)) * 86_400
    }

    /// The first boundary of the step at or before `start`.
    private func firstTick() -> Double {
        let (year, month, _, _, _) = Self.parts(start)
        switch step.unit {
        case .minute, .hour, .day:
            return (start / step.seconds).rounded(.down) * step.seconds
        case .week:
            // Mondays: 1970-01-05 was one.
            let monday = 4 * 86_400.0
            return ((start - monday) / step.seconds).rounded(.down) * step.seconds + monday
        case .month:
            let index = (year * 12 + month - 1) / step.count * step.count
            return Self.time(year: index / 12, month: index % 12 + 1)
        case .year:
            return Self.time(year: year / step.count * step.count, month: 1)
        }
    }

    /// The boundary after `tick`.
    private func advance(_ tick: Double) -> Double? {
        switch step.unit {
        case .minute, .hour, .day, .week:
            return tick + step.seconds
        case .month:
            let (year, month, _, _, _) = Self.parts(tick)
            let index = year * 12 + month - 1 + step.count
            return Self.time(year: index / 12, month: index % 12 + 1)
        case .year:
            let (year, _, _, _, _) = Self.parts(tick)
            return Self.time(year: year + step.count, month: 1)
        }
    }
}
